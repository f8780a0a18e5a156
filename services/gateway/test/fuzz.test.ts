import fc from "fast-check";
import { ROUTES } from "../src/service";
import { type Stack, startStack } from "./harness";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { MAX_BODY_BYTES: "65536" } });
});
afterAll(() => stack.close());

const FIELDS = [
  "task",
  "model",
  "thinkingLevel",
  "sessionId",
  "keepAlive",
  "maxCostUsd",
  "profileId",
  "workspaceId",
  "proxyCountryCode",
  "browserScreenWidth",
  "browserScreenHeight",
  "outputSchema",
  "sensitiveData",
  "enableRecording",
  "inbox",
  "agentmail",
  "codeMode",
  "use_own_key",
  "useOwnKey",
  "strategy",
  "__proto__",
  "constructor",
];
const QUERY_KEYS = ["page", "page_size", "limit", "after", "before", "exp", "sig", "x", ""];

const weirdText = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.constantFrom("", " ", "%", "%00", "%E0%A4%A", "..", "../..", "null", "-1", "1e309", "0x10", "١٢", "\u0000"),
);
const idSegment = fc.oneof(
  fc.uuid().map((u) => u),
  weirdText.map((s) => encodeURIComponent(s)),
  fc.constantFrom("%", "%zz", "%2F", "..%2F..%2Fpackage.json", "swagger-ui.css", "blob-x.png"),
);
const queryString = fc.oneof(
  fc
    .array(
      fc.tuple(fc.constantFrom(...QUERY_KEYS), fc.oneof(weirdText, fc.integer().map(String), fc.double().map(String))),
      {
        maxLength: 5,
      },
    )
    .map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")),
  fc.constantFrom("page=1&page=0", "page[]=1", "page_size=%", "a=%zz", "&&&", "=", "page=1;DROP TABLE"),
);
const fieldValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), weirdText, fc.uuid(), fc.integer(), fc.double());
const body = fc.oneof(
  fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 6 }).map((o) => ({ json: o })),
  fc.jsonValue({ maxDepth: 4 }).map((v) => ({ json: v })),
  weirdText.map((raw) => ({ raw })),
  fc.constantFrom('{"task":', "{'task':'x'}", "[", '{"a":1}}', "\u0000", "{}".repeat(10_000)).map((raw) => ({ raw })),
);
// Mostly the valid key, so most requests get past auth to validation and the handlers.
const keyHeader = fc.oneof(
  { arbitrary: fc.constant<string | null>("BOOTSTRAP"), weight: 4 },
  { arbitrary: fc.constant<string | null>(null), weight: 1 },
  { arbitrary: weirdText.filter((s) => /^[\x20-\x7e]*$/.test(s)), weight: 1 },
);
const contentType = fc.constantFrom(
  undefined,
  "application/json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "",
);

const request = fc.record({
  route: fc.constantFrom(...ROUTES),
  id: idSegment,
  query: queryString,
  body,
  key: keyHeader,
  contentType,
});

test("a few hundred random and malformed requests against every route: no 500, no crash", async () => {
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(request, async ({ route, id, query, body, key, contentType }) => {
      const path = route.path.replace(/\{\w+\}/g, id);
      const method = route.method.toUpperCase();
      const headers: Record<string, string> = {};
      if (key !== null) headers["X-Service-API-Key"] = key === "BOOTSTRAP" ? stack.bootstrapKey : key;
      if (contentType !== undefined) headers["Content-Type"] = contentType;
      const payload = method === "GET" ? undefined : "raw" in body ? body.raw : JSON.stringify(body.json);
      let res: Response;
      try {
        res = await fetch(`${stack.baseUrl}${path}?${query}`, { method, headers, body: payload });
      } catch (err) {
        // The client itself refused to send it (an invalid header value or URL): nothing reached the gateway.
        if (err instanceof TypeError) return;
        throw err;
      }
      const text = await res.text();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      // Browser-pool, runner and billing are not started in this stack: /healthz and a valid browser request are a
      // 503 by design. Everything else, and every invalid request anywhere, must never reach 5xx.
      const unavailableHere = route.path === "/healthz" || route.path.includes("/browsers");
      if (unavailableHere && res.status >= 500) expect(res.status).toBe(503);
      else expect(res.status).toBeLessThan(500);
      if (res.status >= 400) expect(JSON.parse(text)).toHaveProperty("detail");
    }),
    { numRuns: 400 },
  );
  // The run exercised more than the auth wall.
  expect([...statuses.keys()].filter((s) => s !== 401).length).toBeGreaterThan(2);
  const alive = await stack.request("GET", "/api/v3/sessions");
  expect(alive.status).toBe(200);
});

test("a few hundred random query strings against the list and messages routes: 200 or 422, nothing else", async () => {
  const created = await stack.request("POST", "/api/v3/sessions", { body: { keepAlive: true } });
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom("/api/v3/sessions", `/api/v3/sessions/${created.body.id}/messages`),
      queryString,
      async (path, query) => {
        const reply = await stack.request("GET", `${path}?${query}`);
        expect([200, 422]).toContain(reply.status);
        if (reply.status === 422) {
          for (const item of reply.body.detail) {
            expect(item.loc[0]).toBe("query");
            expect(typeof item.msg).toBe("string");
            expect(typeof item.type).toBe("string");
          }
        }
      },
    ),
    { numRuns: 300 },
  );
});
