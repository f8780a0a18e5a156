import { randomUUID } from "node:crypto";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { chromium } from "playwright-core";
import puppeteer from "puppeteer-core";
import { handshake } from "./support/cdp-handshake";
import { eventually } from "./support/pool-harness";
import { type RestStack, startRestStack } from "./support/rest-stack";
import { startTestSite, TEST_PAGE_TITLE } from "./support/test-site";

let stack: RestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;

beforeAll(async () => {
  site = await startTestSite();
  stack = await startRestStack({ MAX_BROWSERS_PER_PROJECT: "2", BROWSER_EGRESS_ALLOW: site.host });
});
afterAll(async () => {
  await stack?.close();
  await site?.close();
});

const VIEW_FIELDS = [
  "id",
  "status",
  "liveUrl",
  "cdpUrl",
  "timeoutAt",
  "startedAt",
  "finishedAt",
  "proxyUsedMb",
  "proxyCost",
  "browserCost",
  "agentSessionId",
  "recordingUrl",
  "recordingAvailable",
  "metadata",
];

test("answers conform to the BrowserSessionView and list schemas of the OpenAPI document, which documents every route", async () => {
  // Each version's routes are in its own document; the v4 answers are checked against v4's.
  const documentOf = async (v: string) => (await (await fetch(`${stack.baseUrl}/api/${v}/openapi.json`)).json()) as any;
  for (const v of ["v3", "v4"]) {
    const paths = (await documentOf(v)).paths;
    expect(Object.keys(paths[`/api/${v}/browsers`]).sort()).toEqual(["get", "post"]);
    expect(Object.keys(paths[`/api/${v}/browsers/{id}`]).sort()).toEqual(["get", "patch"]);
  }
  const doc = await documentOf("v4");
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  ajv.addSchema({ $id: "openapi", components: doc.components }, "openapi");
  const check = (name: string, value: unknown) => {
    const validate = ajv.compile({ $ref: `openapi#/components/schemas/${name}` });
    return validate(value) ? [] : validate.errors;
  };
  const key = await stack.newProjectKey();
  const created = await stack.request("POST", "/api/v4/browsers", { key, body: {} });
  expect(check("BrowserSessionView", created.body)).toEqual([]);
  const stopped = await stack.request("PATCH", `/api/v4/browsers/${created.body.id}`, {
    key,
    body: { action: "stop" },
  });
  expect(check("BrowserSessionView", stopped.body)).toEqual([]);
  expect(check("BrowserSessionListResponse", (await stack.request("GET", "/api/v4/browsers", { key })).body)).toEqual(
    [],
  );
  // The checker can fail.
  expect(check("BrowserSessionView", { ...created.body, status: "paused" })).not.toEqual([]);
});

describe.each(["v4", "v3"])("/api/%s/browsers", (version) => {
  const base = `/api/${version}/browsers`;

  test("create → connect (puppeteer and playwright) → get → list → stop (twice), in the BrowserSessionView shape", async () => {
    const key = await stack.newProjectKey();
    const created = await stack.request("POST", base, { key, body: { timeout: 30, metadata: { team: "qa" } } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual([...VIEW_FIELDS].sort());
    expect(created.body).toMatchObject({
      status: "active",
      finishedAt: null,
      proxyUsedMb: "0",
      proxyCost: "0",
      browserCost: "0",
      agentSessionId: null,
      recordingUrl: null,
      metadata: { team: "qa" },
    });
    const { id, cdpUrl, startedAt, timeoutAt } = created.body;
    expect(new Date(timeoutAt).getTime() - new Date(startedAt).getTime()).toBeLessThanOrEqual(30 * 60_000);

    const viaPuppeteer = await puppeteer.connect({ browserWSEndpoint: cdpUrl, defaultViewport: null });
    const page = await viaPuppeteer.newPage();
    await page.goto(site.url);
    expect(await page.title()).toBe(TEST_PAGE_TITLE);
    await viaPuppeteer.disconnect();
    const viaPlaywright = await chromium.connectOverCDP(cdpUrl.replace(/^ws/, "http"));
    const tab = viaPlaywright
      .contexts()[0]
      .pages()
      .find((p) => p.url() === site.url);
    expect(await tab?.title()).toBe(TEST_PAGE_TITLE);
    await viaPlaywright.close();

    const read = await stack.request("GET", `${base}/${id}`, { key });
    expect(read).toEqual({ status: 200, body: created.body });
    const list = await stack.request("GET", `${base}?pageNumber=1&pageSize=5`, { key });
    expect(list).toEqual({ status: 200, body: { items: [created.body], totalItems: 1, pageNumber: 1, pageSize: 5 } });
    const filtered = async (query: string) => {
      const reply = await stack.request("GET", `${base}?${query}`, { key });
      expect(reply.status).toBe(200);
      return [reply.body.items.map((b: { id: string }) => b.id), reply.body.totalItems];
    };
    expect(await filtered("filterBy=active")).toEqual([[id], 1]);
    expect(await filtered("filterBy=stopped")).toEqual([[], 0]);
    expect(await filtered(`agentSessionId=${randomUUID()}`)).toEqual([[], 0]);
    const badFilter = await stack.request("GET", `${base}?filterBy=paused`, { key });
    expect([badFilter.status, badFilter.body.detail[0].loc]).toEqual([422, ["query", "filterBy"]]);

    const stopped = await stack.request("PATCH", `${base}/${id}`, { key, body: { action: "stop" } });
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ id, status: "stopped", cdpUrl });
    expect(new Date(stopped.body.finishedAt).getTime()).toBeGreaterThanOrEqual(new Date(startedAt).getTime());
    expect(await handshake(cdpUrl)).toBe(404);
    const again = await stack.request("PATCH", `${base}/${id}`, { key, body: { action: "stop" } });
    expect(again).toEqual({ status: 200, body: stopped.body });
    expect(await filtered("filterBy=stopped")).toEqual([[id], 1]);
    expect(await filtered("filterBy=active")).toEqual([[], 0]);
    await eventually(async () => ((await stack.pool.chromiumIds()).includes(id) ? undefined : true));
  });

  test("allowedDomains reach the browser: a host outside them is refused with the reason; an IP pattern allows that IP", async () => {
    const key = await stack.newProjectKey();
    const limited = await stack.request("POST", base, { key, body: { allowedDomains: ["Shop.test"] } });
    expect(limited.status).toBe(201);
    const open = await stack.request("POST", base, { key, body: { allowedDomains: ["127.0.0.1"] } });
    try {
      const client = await puppeteer.connect({ browserWSEndpoint: limited.body.cdpUrl, defaultViewport: null });
      const refused = await (await client.newPage()).goto(site.url);
      expect(refused?.status()).toBe(403);
      expect(refused?.headers()["x-egress-blocked"]).toBe(
        "Blocked by the browser's allowedDomains: 127.0.0.1 is not shop.test or one of its subdomains",
      );
      await client.disconnect();
      const other = await puppeteer.connect({ browserWSEndpoint: open.body.cdpUrl, defaultViewport: null });
      const page = await other.newPage();
      await page.goto(site.url);
      expect(await page.title()).toBe(TEST_PAGE_TITLE);
      await other.disconnect();
    } finally {
      for (const r of [limited, open]) {
        await stack.request("PATCH", `${base}/${r.body.id}`, { key, body: { action: "stop" } });
      }
    }
  });

  test("another project's browser is 404, for reading and for stopping", async () => {
    const owner = await stack.newProjectKey();
    const stranger = await stack.newProjectKey();
    const { body } = await stack.request("POST", base, { key: owner, body: {} });
    const notFound = { status: 404, body: { detail: "Browser not found" } };
    expect(await stack.request("GET", `${base}/${body.id}`, { key: stranger })).toEqual(notFound);
    expect(await stack.request("PATCH", `${base}/${body.id}`, { key: stranger, body: { action: "stop" } })).toEqual(
      notFound,
    );
    expect(await stack.request("GET", `${base}/${randomUUID()}`, { key: owner })).toEqual(notFound);
    expect((await stack.request("GET", base, { key: stranger })).body).toEqual({
      items: [],
      totalItems: 0,
      pageNumber: 1,
      pageSize: 10,
    });
    expect((await stack.request("GET", `${base}/${body.id}`, { key: owner })).body.status).toBe("active");
    await stack.request("PATCH", `${base}/${body.id}`, { key: owner, body: { action: "stop" } });
  });

  test("past the project's maximum: 429 with a clear detail; no key: 401", async () => {
    const key = await stack.newProjectKey();
    const made = [
      await stack.request("POST", base, { key, body: {} }),
      await stack.request("POST", base, { key, body: {} }),
    ];
    expect(made.map((r) => r.status)).toEqual([201, 201]);
    expect(await stack.request("POST", base, { key, body: {} })).toEqual({
      status: 429,
      body: {
        detail: "Too many concurrent active browsers for this project (maximum 2). Stop a browser and try again.",
      },
    });
    for (const r of made) await stack.request("PATCH", `${base}/${r.body.id}`, { key, body: { action: "stop" } });
    expect((await stack.request("POST", base, { key: null, body: {} })).status).toBe(401);
  });

  const bad = (loc: (string | number)[], msg: string, type: string) => ({
    status: 422,
    body: { detail: [{ loc, msg, type }] },
  });
  const id = randomUUID();
  const cases: Array<[string, string, string, unknown, ReturnType<typeof bad>]> = [
    [
      "timeout over 240",
      "POST",
      "",
      { timeout: 241 },
      bad(["body", "timeout"], "Input should be less than or equal to 240", "less_than_equal"),
    ],
    [
      "timeout 0",
      "POST",
      "",
      { timeout: 0 },
      bad(["body", "timeout"], "Input should be greater than or equal to 1", "greater_than_equal"),
    ],
    [
      "timeout as text",
      "POST",
      "",
      { timeout: "60" },
      bad(["body", "timeout"], "Input should be a valid integer", "int_type"),
    ],
    [
      "fractional timeout",
      "POST",
      "",
      { timeout: 1.5 },
      bad(
        ["body", "timeout"],
        "Input should be a valid integer, got a number with a fractional part",
        "int_from_float",
      ),
    ],
    [
      "unknown country",
      "POST",
      "",
      { proxyCountryCode: "xx" },
      bad(["body", "proxyCountryCode"], "Input should be one of the 248 allowed values", "enum"),
    ],
    [
      "uppercase country",
      "POST",
      "",
      { proxyCountryCode: "US" },
      bad(["body", "proxyCountryCode"], "Input should be one of the 248 allowed values", "enum"),
    ],
    [
      "profileId not a UUID",
      "POST",
      "",
      { profileId: "default" },
      bad(["body", "profileId"], "Input should be a valid UUID", "uuid_parsing"),
    ],
    [
      "width without height",
      "POST",
      "",
      { browserScreenWidth: 1280 },
      bad(
        ["body", "browserScreenHeight"],
        "browserScreenWidth and browserScreenHeight must be given together",
        "missing",
      ),
    ],
    [
      "width too small",
      "POST",
      "",
      { browserScreenWidth: 100, browserScreenHeight: 600 },
      bad(["body", "browserScreenWidth"], "Input should be greater than or equal to 320", "greater_than_equal"),
    ],
    [
      "height too big",
      "POST",
      "",
      { browserScreenWidth: 800, browserScreenHeight: 5000 },
      bad(["body", "browserScreenHeight"], "Input should be less than or equal to 4320", "less_than_equal"),
    ],
    [
      "recording flag as text",
      "POST",
      "",
      { enableRecording: "yes" },
      bad(["body", "enableRecording"], "Input should be a valid boolean", "bool_type"),
    ],
    [
      "11 metadata pairs",
      "POST",
      "",
      { metadata: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, "v"])) },
      bad(["body", "metadata"], "metadata should have at most 10 entries", "too_long"),
    ],
    [
      "metadata value not a string",
      "POST",
      "",
      { metadata: { n: 1 } },
      bad(["body", "metadata", "n"], "Input should be a valid string", "string_type"),
    ],
    [
      "metadata not an object",
      "POST",
      "",
      { metadata: ["a"] },
      bad(["body", "metadata"], "Input should be a valid dictionary", "dict_type"),
    ],
    [
      "body not an object",
      "POST",
      "",
      [1],
      bad(["body"], "Input should be a valid dictionary or object to extract fields from", "model_attributes_type"),
    ],
    [
      "allowedDomains with a URL instead of a host",
      "POST",
      "",
      { allowedDomains: ["shop.test", "http://evil.test"] },
      bad(
        ["body", "allowedDomains", 1],
        String.raw`String should match pattern '^(?=.{1,253}$)(\*\.)?([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$'`,
        "string_pattern_mismatch",
      ),
    ],
    [
      "allowedDomains empty",
      "POST",
      "",
      { allowedDomains: [] },
      bad(["body", "allowedDomains"], "List should have at least 1 item", "too_short"),
    ],
    [
      "customProxy port 0",
      "POST",
      "",
      { customProxy: { host: "proxy.example.com", port: 0 } },
      bad(["body", "customProxy", "port"], "Input should be greater than or equal to 1", "greater_than_equal"),
    ],
    [
      "customProxy host with a scheme",
      "POST",
      "",
      { customProxy: { host: "http://proxy.example.com", port: 8080 } },
      bad(
        ["body", "customProxy", "host"],
        String.raw`String should match pattern '^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])$'`,
        "string_pattern_mismatch",
      ),
    ],
    [
      "customProxy on loopback (our own services)",
      "POST",
      "",
      { customProxy: { host: "127.0.0.1", port: 1, username: "u", password: "p" } },
      bad(
        ["body", "customProxy", "host"],
        "customProxy is closed by the browser egress policy: 127.0.0.1:1 is a loopback address; " +
          "open it with BROWSER_EGRESS_ALLOW if it is meant to be reachable",
        "value_error",
      ),
    ],
    [
      "unknown action",
      "PATCH",
      `/${id}`,
      { action: "pause" },
      bad(["body", "action"], "Input should be 'stop'", "literal_error"),
    ],
    ["missing action", "PATCH", `/${id}`, {}, bad(["body", "action"], "Field required", "missing")],
    [
      "stop of a non-UUID id",
      "PATCH",
      "/not-a-uuid",
      { action: "stop" },
      bad(["path", "id"], "Input should be a valid UUID", "uuid_parsing"),
    ],
    [
      "read of a non-UUID id",
      "GET",
      "/not-a-uuid",
      undefined,
      bad(["path", "id"], "Input should be a valid UUID", "uuid_parsing"),
    ],
    [
      "pageSize over 100",
      "GET",
      "?pageSize=101",
      undefined,
      bad(["query", "pageSize"], "Input should be less than or equal to 100", "less_than_equal"),
    ],
    [
      "pageNumber 0",
      "GET",
      "?pageNumber=0",
      undefined,
      bad(["query", "pageNumber"], "Input should be greater than or equal to 1", "greater_than_equal"),
    ],
    [
      "pageSize not a number",
      "GET",
      "?pageSize=ten",
      undefined,
      bad(
        ["query", "pageSize"],
        "Input should be a valid integer, unable to parse string as an integer",
        "int_parsing",
      ),
    ],
  ];
  test.each(cases)(
    "422 for %s, with the exact HTTPValidationError body",
    async (_name, method, path, body, expected) => {
      expect(await stack.request(method, `${base}${path}`, { body })).toEqual(expected);
    },
  );

  test("malformed JSON is a 422 located at the body, never a 500", async () => {
    const reply = await stack.request("POST", base, { raw: "{nope" });
    expect(reply.status).toBe(422);
    expect(reply.body.detail[0].loc[0]).toBe("body");
  });
});
