import { request as httpRequest } from "node:http";
import { scrapeMetrics, sumOf } from "@bas/testing";
import { type Stack, startStack } from "./harness";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

interface RawReply {
  status: number;
  allow: string | undefined;
  body: unknown;
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

/** Through node:http, which sends any method Node knows (fetch refuses TRACE and friends). */
function send(method: string, path: string, key: string | null = stack.bootstrapKey): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${stack.baseUrl}${path}`,
      { method, headers: key ? { "X-Service-API-Key": key } : {} },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body: parse(text) }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const allowed = (header: string | undefined) => (header ?? "").split(/,\s*/).sort();
const SESSION = "6f1c1b52-3c4e-4a53-9a55-2b1f4c6c9d10";

test.each([
  ["GET", "/nope"],
  ["GET", `/live/${SESSION}`],
  ["GET", "/api/v3/nothing"],
  ["GET", "/api/v5/sessions"],
  ["GET", `/api/v3/sessions/${SESSION}/messages/extra`],
  ["POST", "/nope"],
  ["DELETE", "/api"],
])("%s %s is 404 Not Found, with a key or without", async (method, path) => {
  for (const key of [stack.bootstrapKey, null]) {
    const reply = await send(method, path, key);
    expect(reply).toMatchObject({ status: 404, body: { detail: "Not Found" } });
  }
});

test("HEAD of an unknown path is 404 too", async () => {
  expect((await send("HEAD", "/nope")).status).toBe(404);
});

test.each(["PUT", "DELETE", "PATCH", "TRACE", "PROPFIND", "M-SEARCH", "PURGE", "LINK"])(
  "%s on a known path is 405 Method Not Allowed, naming the methods it has in Allow",
  async (method) => {
    const reply = await send(method, "/api/v3/sessions");
    expect(reply.status).toBe(405);
    expect(reply.body).toEqual({ detail: "Method Not Allowed" });
    expect(allowed(reply.allow)).toEqual(["GET", "HEAD", "POST"]);
    const messages = await send(method, `/api/v3/sessions/${SESSION}/messages`);
    expect(messages.status).toBe(405);
    expect(allowed(messages.allow)).toEqual(["GET", "HEAD"]);
  },
);

test.each(["TRACE", "PROPFIND", "M-SEARCH", "PURGE"])("%s on an unknown path is 404, not 501", async (method) => {
  const reply = await send(method, "/nope");
  expect(reply).toMatchObject({ status: 404, body: { detail: "Not Found" } });
});

test("OPTIONS on a known path answers 200 with the path's methods in Allow", async () => {
  const reply = await send("OPTIONS", `/api/v3/sessions/${SESSION}`);
  expect(reply.status).toBe(200);
  expect(allowed(reply.allow)).toEqual(["DELETE", "GET", "HEAD"]);
});

test("/metrics labels each request with its route as declared, never the raw path; unknown paths share one label", async () => {
  const unknownId = "0b7e2f6c-91a4-4c55-8f0e-5d2a1c3b4e6f";
  expect((await send("GET", `/api/v3/sessions/${unknownId}`)).status).toBe(404);
  expect((await send("GET", "/api/v3/sessions")).status).toBe(200);
  expect((await send("GET", `/nope/${unknownId}`)).status).toBe(404);
  expect((await send("PUT", "/api/v3/sessions")).status).toBe(405);

  const samples = await scrapeMetrics(stack.gateway.metricsPort);
  const answered = (method: string, route: string, status: string) =>
    sumOf(samples, "bas_http_server_duration_seconds_count", { service: "gateway", method, route, status });
  expect(answered("GET", "/api/v3/sessions/{id}", "404")).toBeGreaterThanOrEqual(1);
  expect(answered("GET", "/api/v3/sessions", "200")).toBeGreaterThanOrEqual(1);
  expect(answered("GET", "unmatched", "404")).toBeGreaterThanOrEqual(1);
  expect(answered("PUT", "unmatched", "405")).toBeGreaterThanOrEqual(1);
  const routes = samples.filter((s) => s.name.startsWith("bas_http_server_")).map((s) => s.labels.route);
  expect(routes.filter((route) => route.includes(unknownId))).toEqual([]);
});
