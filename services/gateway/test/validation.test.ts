import { DEFAULT_MODEL_CATALOG } from "@bas/models";
import { type Stack, startStack } from "./harness";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { MAX_BODY_BYTES: "4096" } });
});
afterAll(() => stack.close());

const SESSION = "6f1c1b52-3c4e-4a53-9a55-2b1f4c6c9d10";
const item = (loc: (string | number)[], msg: string, type: string) => ({ loc, msg, type });
const quoted = (values: readonly string[]) =>
  `Input should be ${values
    .slice(0, -1)
    .map((v) => `'${v}'`)
    .join(", ")} or '${values.at(-1)}'`;
const PATTERN = "^(?!^[-+.]*$)[+-]?0*\\d*\\.?\\d*$";
const INT_PARSING = "Input should be a valid integer, unable to parse string as an integer";

describe("query parameters", () => {
  test.each([
    ["page=0", [item(["query", "page"], "Input should be greater than or equal to 1", "greater_than_equal")]],
    ["page=-3", [item(["query", "page"], "Input should be greater than or equal to 1", "greater_than_equal")]],
    ["page=abc", [item(["query", "page"], INT_PARSING, "int_parsing")]],
    ["page=1.5", [item(["query", "page"], INT_PARSING, "int_parsing")]],
    ["page=", [item(["query", "page"], INT_PARSING, "int_parsing")]],
    ["page_size=0", [item(["query", "page_size"], "Input should be greater than or equal to 1", "greater_than_equal")]],
    ["page_size=101", [item(["query", "page_size"], "Input should be less than or equal to 100", "less_than_equal")]],
    [
      "page=0&page_size=x",
      [
        item(["query", "page"], "Input should be greater than or equal to 1", "greater_than_equal"),
        item(["query", "page_size"], INT_PARSING, "int_parsing"),
      ],
    ],
  ])("GET /api/v3/sessions?%s → 422", async (query, detail) => {
    const reply = await stack.request("GET", `/api/v3/sessions?${query}`);
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ detail });
  });

  test("defaults and bounds are accepted: page 1, page_size 1 and 100", async () => {
    for (const query of ["", "?page=1&page_size=1", "?page_size=100", "?page=7"]) {
      const reply = await stack.request("GET", `/api/v3/sessions${query}`);
      expect(reply.status).toBe(200);
    }
    expect((await stack.request("GET", "/api/v3/sessions")).body).toMatchObject({ page: 1, pageSize: 20 });
  });

  test.each([
    ["limit=0", [item(["query", "limit"], "Input should be greater than or equal to 1", "greater_than_equal")]],
    ["limit=101", [item(["query", "limit"], "Input should be less than or equal to 100", "less_than_equal")]],
    ["limit=ten", [item(["query", "limit"], INT_PARSING, "int_parsing")]],
    ["after=42", [item(["query", "after"], "Input should be a valid UUID", "uuid_parsing")]],
    ["before=nope", [item(["query", "before"], "Input should be a valid UUID", "uuid_parsing")]],
  ])("GET /api/v3/sessions/{id}/messages?%s → 422", async (query, detail) => {
    const reply = await stack.request("GET", `/api/v3/sessions/${SESSION}/messages?${query}`);
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ detail });
  });
});

describe("path ids", () => {
  test.each([
    ["GET", "/api/v3/sessions/not-a-uuid"],
    ["DELETE", "/api/v3/sessions/123"],
    ["POST", "/api/v3/sessions/6f1c1b52-3c4e-4a53-9a55/stop"],
    ["GET", "/api/v3/sessions/zzzzzzzz-3c4e-4a53-9a55-2b1f4c6c9d10/messages"],
  ])("%s %s → 422 at path.id", async (method, path) => {
    const reply = await stack.request(method, path);
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ detail: [item(["path", "id"], "Input should be a valid UUID", "uuid_parsing")] });
  });

  test("a well-formed id of no session is 404 Session not found", async () => {
    const reply = await stack.request("GET", `/api/v3/sessions/${SESSION}`);
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ detail: "Session not found" });
  });
});

describe("POST /api/v3/sessions body", () => {
  const models = DEFAULT_MODEL_CATALOG.map((m) => m.id);
  test.each<[string, unknown, object[]]>([
    ["unknown model", { task: "t", model: "gpt-5" }, [item(["body", "model"], quoted(models), "enum")]],
    [
      "thinkingLevel",
      { task: "t", thinkingLevel: "extreme" },
      [item(["body", "thinkingLevel"], quoted(["disabled", "low", "medium", "high"]), "enum")],
    ],
    [
      "uppercase proxyCountryCode",
      { task: "t", proxyCountryCode: "US" },
      [item(["body", "proxyCountryCode"], "Input should be one of the 248 allowed values", "enum")],
    ],
    [
      "unknown proxyCountryCode",
      { task: "t", proxyCountryCode: "zz" },
      [item(["body", "proxyCountryCode"], "Input should be one of the 248 allowed values", "enum")],
    ],
    [
      "maxCostUsd text",
      { task: "t", maxCostUsd: "ten" },
      [item(["body", "maxCostUsd"], `String should match pattern '${PATTERN}'`, "string_pattern_mismatch")],
    ],
    [
      "maxCostUsd only signs and dots",
      { task: "t", maxCostUsd: "+." },
      [item(["body", "maxCostUsd"], `String should match pattern '${PATTERN}'`, "string_pattern_mismatch")],
    ],
    [
      "maxCostUsd zero string",
      { task: "t", maxCostUsd: "0.000" },
      [item(["body", "maxCostUsd"], "Input should be greater than 0", "greater_than")],
    ],
    [
      "maxCostUsd negative number",
      { task: "t", maxCostUsd: -5 },
      [item(["body", "maxCostUsd"], "Input should be greater than 0", "greater_than")],
    ],
    [
      "maxCostUsd boolean",
      { task: "t", maxCostUsd: true },
      [item(["body", "maxCostUsd"], "Input should be a valid number or decimal string", "decimal_type")],
    ],
    [
      "width without height",
      { task: "t", browserScreenWidth: 1920 },
      [
        item(
          ["body", "browserScreenHeight"],
          "browserScreenWidth and browserScreenHeight must be given together",
          "missing",
        ),
      ],
    ],
    [
      "height without width",
      { task: "t", browserScreenHeight: 1080, browserScreenWidth: null },
      [
        item(
          ["body", "browserScreenWidth"],
          "browserScreenWidth and browserScreenHeight must be given together",
          "missing",
        ),
      ],
    ],
    [
      "screen too small",
      { task: "t", browserScreenWidth: 100, browserScreenHeight: 100 },
      [
        item(["body", "browserScreenWidth"], "Input should be greater than or equal to 320", "greater_than_equal"),
        item(["body", "browserScreenHeight"], "Input should be greater than or equal to 240", "greater_than_equal"),
      ],
    ],
    [
      "screen too large",
      { task: "t", browserScreenWidth: 7681, browserScreenHeight: 4321 },
      [
        item(["body", "browserScreenWidth"], "Input should be less than or equal to 7680", "less_than_equal"),
        item(["body", "browserScreenHeight"], "Input should be less than or equal to 4320", "less_than_equal"),
      ],
    ],
    [
      "fractional width",
      { task: "t", browserScreenWidth: 1280.5, browserScreenHeight: 720 },
      [
        item(
          ["body", "browserScreenWidth"],
          "Input should be a valid integer, got a number with a fractional part",
          "int_from_float",
        ),
      ],
    ],
    [
      "width as text",
      { task: "t", browserScreenWidth: "1280", browserScreenHeight: 720 },
      [item(["body", "browserScreenWidth"], "Input should be a valid integer", "int_type")],
    ],
    [
      "outputSchema not an object",
      { task: "t", outputSchema: "a string" },
      [item(["body", "outputSchema"], "Input should be a valid dictionary", "dict_type")],
    ],
    ["task not a string", { task: 5 }, [item(["body", "task"], "Input should be a valid string", "string_type")]],
    [
      "empty task",
      { task: "" },
      [item(["body", "task"], "String should have at least 1 character", "string_too_short")],
    ],
    [
      "keepAlive text",
      { keepAlive: "yes" },
      [item(["body", "keepAlive"], "Input should be a valid boolean", "bool_type")],
    ],
    [
      "sessionId",
      { task: "t", sessionId: "abc" },
      [item(["body", "sessionId"], "Input should be a valid UUID", "uuid_parsing")],
    ],
    [
      "profileId",
      { task: "t", profileId: 7 },
      [item(["body", "profileId"], "Input should be a valid string", "string_type")],
    ],
    [
      "sensitiveData value",
      { task: "t", sensitiveData: { password: 1234 } },
      [item(["body", "sensitiveData", "password"], "Input should be a valid string", "string_type")],
    ],
    [
      "use_own_key text",
      { task: "t", use_own_key: "true" },
      [item(["body", "use_own_key"], "Input should be a valid boolean", "bool_type")],
    ],
    [
      "agentmail text",
      { task: "t", agentmail: 1 },
      [item(["body", "agentmail"], "Input should be a valid boolean", "bool_type")],
    ],
    [
      "array body",
      [1, 2],
      [item(["body"], "Input should be a valid dictionary or object to extract fields from", "model_attributes_type")],
    ],
    [
      "string body",
      "do something",
      [item(["body"], "Input should be a valid dictionary or object to extract fields from", "model_attributes_type")],
    ],
  ])("%s → exact 422", async (_name, body, detail) => {
    const reply = await stack.request("POST", "/api/v3/sessions", { body });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ detail });
  });

  test.each([
    ["invalid type keyword", { type: "nope" }],
    ["unresolvable $ref", { type: "object", properties: { a: { $ref: "#/$defs/missing" } } }],
    ["minimum not a number", { type: "number", minimum: "five" }],
  ])("outputSchema that does not compile (%s) → 422 json_schema_invalid", async (_name, outputSchema) => {
    const reply = await stack.request("POST", "/api/v3/sessions", { body: { task: "t", outputSchema } });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({
      detail: [
        {
          loc: ["body", "outputSchema"],
          msg: expect.stringMatching(/^outputSchema is not a valid JSON Schema: .+/),
          type: "json_schema_invalid",
        },
      ],
    });
  });

  test.each([
    ["truncated", '{"task": "x"'],
    ["trailing comma", '{"task": "x",}'],
    ["not JSON at all", "task=hello"],
    ["prototype poisoning", '{"task":"x","__proto__":{"admin":true}}'],
  ])("malformed JSON (%s) → 422 json_invalid, never 500", async (_name, raw) => {
    const reply = await stack.request("POST", "/api/v3/sessions", { raw });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ detail: [item(["body"], "JSON decode error", "json_invalid")] });
  });

  test("several faults are reported together", async () => {
    const reply = await stack.request("POST", "/api/v3/sessions", {
      body: { task: 1, model: "nope", keepAlive: 0 },
    });
    expect(reply.status).toBe(422);
    expect(reply.body.detail.map((d: { loc: string[] }) => d.loc)).toEqual([
      ["body", "task"],
      ["body", "model"],
      ["body", "keepAlive"],
    ]);
  });

  test("a body over MAX_BODY_BYTES is 413", async () => {
    const reply = await stack.request("POST", "/api/v3/sessions", { body: { task: "x".repeat(5000) } });
    expect(reply.status).toBe(413);
    expect(reply.body).toEqual({ detail: "Request body too large" });
  });

  test("valid variants are accepted: unknown fields ignored, aliases, decimal forms, null proxy", async () => {
    const accepted = [
      { task: "t", unknownField: { nested: true } },
      { task: "t", maxCostUsd: "1.50", proxyCountryCode: null },
      { task: "t", maxCostUsd: 2, useOwnKey: true, model: "o3" },
      { task: "t", use_own_key: true, model: "o3", agentmail: true },
      { task: "t", browserScreenWidth: 320, browserScreenHeight: 240 },
      { task: "t", browserScreenWidth: 7680, browserScreenHeight: 4320 },
      {
        task: "t",
        outputSchema: {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          properties: { name: { type: "string" }, price: { type: "number", minimum: 0 } },
          required: ["name"],
        },
      },
    ];
    const created = [];
    for (const body of accepted) {
      const reply = await stack.request("POST", "/api/v3/sessions", { body });
      expect(reply.status).toBe(200);
      created.push(reply.body);
      await stack.request("DELETE", `/api/v3/sessions/${reply.body.id}`);
    }
    expect(created[1]).toMatchObject({ maxCostUsd: "1.5", proxyCountryCode: null });
    expect(created[2]).toMatchObject({ maxCostUsd: "2", model: "o3" });
    expect(created[0]).toMatchObject({ proxyCountryCode: "us", model: "svc-max" });
    expect(created[4]).toMatchObject({ browserScreenWidth: 320, browserScreenHeight: 240 });
  });

  test("a model that needs an own key, without use_own_key, is 400 with a clear detail", async () => {
    const reply = await stack.request("POST", "/api/v3/sessions", { body: { task: "t", model: "o3" } });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      detail: `Model 'o3' is served only with your own provider key: send "use_own_key": true`,
    });
  });
});

describe("allowedDomains (v3 sessions, v4 runs)", () => {
  const HOST_PATTERN = String.raw`^(?=.{1,253}$)(\*\.)?([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$`;
  const cases: Array<[string, unknown, object[]]> = [
    [
      "a URL instead of a host",
      ["shop.test", "https://evil.test/"],
      [item(["body", "allowedDomains", 1], `String should match pattern '${HOST_PATTERN}'`, "string_pattern_mismatch")],
    ],
    [
      "a host with a port",
      ["shop.test:443"],
      [item(["body", "allowedDomains", 0], `String should match pattern '${HOST_PATTERN}'`, "string_pattern_mismatch")],
    ],
    ["an empty list", [], [item(["body", "allowedDomains"], "List should have at least 1 item", "too_short")]],
    [
      "51 hosts",
      Array.from({ length: 51 }, (_, i) => `d${i}.test`),
      [item(["body", "allowedDomains"], "List should have at most 50 items", "too_long")],
    ],
  ];
  test.each(cases)("POST /api/v3/sessions with %s → exact 422", async (_name, allowedDomains, detail) => {
    const reply = await stack.request("POST", "/api/v3/sessions", { body: { task: "t", allowedDomains } });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ detail });
  });
  test.each(cases)("POST /api/v4/runs with %s → exact 422", async (_name, allowedDomains, detail) => {
    const reply = await stack.request("POST", "/api/v4/runs", { body: { task: "t", allowedDomains } });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ detail });
  });
});

describe("POST /api/v3/sessions/{id}/stop body", () => {
  test("an unknown strategy is 422", async () => {
    const reply = await stack.request("POST", `/api/v3/sessions/${SESSION}/stop`, { body: { strategy: "all" } });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ detail: [item(["body", "strategy"], quoted(["task", "session"]), "enum")] });
  });
});
