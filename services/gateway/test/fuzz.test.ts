import { request as httpRequest } from "node:http";
import fc from "fast-check";
import { ROUTES } from "../src/service";
import { type FuzzRequest, fuzzRequest, type Operation, renderBody, renderHeaders } from "./fuzz-requests";
import { type Stack, startStack } from "./harness";

/**
 * A fixed seed: the same requests every run, so a failure is never a fluke and replays with the seed and path that
 * fast-check prints. Change it (or set FUZZ_SEED) to explore further.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const RUNS = 3_000;

// Every service the REST API calls is real and running (sessions, billing, browser-pool with Chromium), so that a
// valid request reaches a handler and the service behind it; only the runner is absent (it would start working on
// the tasks). One browser per project: the first valid browser create launches Chromium, later ones are a 429. The
// browser routes use a project of their own, so that its browser does not fill the sessions project's quota (a new
// session needs room for a browser) and session creates keep reaching the sessions service.
let stack: Stack;
let browsersKey: string;
let sessionId: string;
let operations: Operation[];
const methodsByPath = new Map<string, string[]>();

beforeAll(async () => {
  stack = await startStack({
    billing: true,
    browserPool: { MAX_BROWSERS_PER_PROJECT: "1" },
    sessionsEnv: { MAX_ACTIVE_SESSIONS_PER_PROJECT: "100000" },
  });
  browsersKey = await stack.newProjectKey();
  sessionId = (await stack.request("POST", "/api/v3/sessions", { body: { keepAlive: true } })).body.id;
  // Both versions' documents: every documented operation of the API.
  operations = [];
  for (const version of ["v3", "v4"]) {
    const doc = (await stack.request("GET", `/api/${version}/openapi.json`, { key: null })).body;
    operations.push(...documentedOperations(doc));
  }
  // The hidden routes (health, docs) are served too; they are fuzzed like the rest.
  for (const route of ROUTES.filter((r) => r.hidden))
    operations.push({ method: route.method.toUpperCase(), path: route.path, query: [], body: null });
  for (const route of ROUTES) {
    const methods = methodsByPath.get(route.path) ?? [];
    methods.push(route.method.toUpperCase(), ...(route.method === "get" ? ["HEAD"] : []));
    methodsByPath.set(route.path, methods);
  }
});
afterAll(() => stack.close());

/** Every operation of the OpenAPI document, with the schemas of its query parameters and body fields. */
function documentedOperations(doc: any): Operation[] {
  // The document's schemas refer to components; none refers to itself, so resolving is a plain walk.
  const deref = (schema: any): any => {
    if (Array.isArray(schema)) return schema.map(deref);
    if (!schema || typeof schema !== "object") return schema;
    if (schema.$ref) return deref({ ...doc.components.schemas[schema.$ref.split("/").at(-1)], ...omitRef(schema) });
    return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, deref(v)]));
  };
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(item)) {
      const body = deref(op.requestBody?.content?.["application/json"]?.schema);
      out.push({
        method: method.toUpperCase(),
        path,
        query: (op.parameters ?? [])
          .filter((p: any) => p.in === "query")
          .map((p: any) => ({ name: p.name, schema: deref(p.schema) })),
        body: op.requestBody ? (body?.properties ?? {}) : null,
      });
    }
  return out;
}

const omitRef = ({ $ref: _ref, ...rest }: Record<string, unknown>) => rest;

interface Answer {
  status: number;
  allow?: string;
  contentType?: string;
  text: string;
}

/** Sends through node:http, which takes any method and header Node knows; undefined when the caller hung up. */
function send(req: FuzzRequest): Promise<Answer | undefined> {
  const payload = renderBody(req.body);
  const headers = renderHeaders(req.headers, req.path.includes("/browsers") ? browsersKey : stack.bootstrapKey);
  // Framed like any client frames a body (Node sends the body of a GET unframed otherwise).
  if (payload !== undefined) headers["Content-Length"] = String(Buffer.byteLength(payload));
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      `${stack.baseUrl}${req.path}${req.query ? `?${req.query}` : ""}`,
      // A connection per request: a keep-alive socket the server closed after a refusal would fail the next one.
      { method: req.method, headers, agent: false },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            allow: res.headers.allow,
            contentType: res.headers["content-type"],
            text,
          }),
        );
        res.on("error", reject);
      },
    );
    outgoing.on("error", (err) => (req.hangUp ? resolve(undefined) : reject(err)));
    if (req.hangUp && payload) {
      // The whole body announced, half sent, and gone: the gateway is left reading a body that never ends.
      outgoing.write(payload.slice(0, payload.length / 2), () => {
        outgoing.destroy();
        resolve(undefined);
      });
      return;
    }
    outgoing.end(payload);
  });
}

const sorted = (list: string) => list.split(/,\s*/).sort();

/** What a caller may rely on whatever it sends. */
function checkAnswer(req: FuzzRequest, answer: Answer) {
  const json = answer.contentType?.startsWith("application/json") && answer.text ? JSON.parse(answer.text) : undefined;
  // Health is the one answer that is a 503 here, and says exactly why: this stack has no runner.
  if (req.path.startsWith("/healthz") && answer.status === 503) {
    if (req.method !== "HEAD") expect(json.detail).toBe("Unavailable: runner: not configured");
    return;
  }
  expect(answer.status).toBeLessThan(500);
  // Node's own parser refuses an oversized header block before the gateway sees the request.
  if (answer.status === 431) {
    expect(req.headers.key).toBe("oversized");
    return;
  }
  const hasBody = req.method !== "HEAD";
  if (req.expect.kind === "unknown-route") {
    expect(answer.status).toBe(404);
    if (hasBody) expect(json).toEqual({ detail: "Not Found" });
  }
  if (req.expect.kind === "other-method" && !req.expect.allowed.includes(req.method)) {
    expect(answer.status).toBe(req.method === "OPTIONS" ? 200 : 405);
    expect(sorted(answer.allow ?? "")).toEqual([...new Set(req.expect.allowed)].sort());
    // A HEAD answer has no body, whatever its status.
    if (req.method !== "OPTIONS" && hasBody) expect(json).toEqual({ detail: "Method Not Allowed" });
  }
  if (answer.status >= 400 && hasBody) expect(json).toHaveProperty("detail");
  if (answer.status === 422 && hasBody)
    for (const item of json.detail) {
      expect(["body", "query", "path"]).toContain(item.loc[0]);
      expect(typeof item.msg).toBe("string");
      expect(typeof item.type).toBe("string");
    }
}

test(`${RUNS} generated requests over every route and method: no 5xx, and a healthy service afterwards`, async () => {
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(fuzzRequest(operations, methodsByPath, sessionId), async (req) => {
      let answer: Answer | undefined;
      try {
        answer = await send(req);
      } catch (err) {
        // The client refused to send it (a header value Node will not write): nothing reached the gateway.
        if ((err as { code?: string }).code === "ERR_INVALID_CHAR") return;
        throw err;
      }
      if (!answer) return;
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      try {
        checkAnswer(req, answer);
      } catch (err) {
        throw new Error(`answered ${answer.status} ${answer.text.slice(0, 300)}`, { cause: err });
      }
    }),
    { seed: SEED, numRuns: RUNS, endOnFailure: true },
  );

  // The run reached the handlers and the services behind them, not only the auth wall and the validator.
  for (const status of [200, 401, 404, 405, 422]) expect(statuses.get(status)).toBeGreaterThan(0);

  // Afterwards: every part the requests went through still answers (the runner is not part of this stack)...
  const health = await stack.request("GET", "/healthz", { key: null });
  expect(health.body.checks).toEqual({
    sessions: "ok",
    browserPool: "ok",
    runner: "not configured",
    billing: "ok",
    eventStore: "ok",
    database: "ok",
  });
  // ...and a caller's ordinary work goes through: a new project creates a session and reads it back.
  const key = await stack.newProjectKey();
  const created = await stack.request("POST", "/api/v3/sessions", { key, body: { task: "after the storm" } });
  expect(created.status).toBe(200);
  const read = await stack.request("GET", `/api/v3/sessions/${created.body.id}`, { key });
  expect(read.status).toBe(200);
  expect(read.body.id).toBe(created.body.id);
  const list = await stack.request("GET", "/api/v3/sessions", { key });
  expect(list.body).toMatchObject({ total: 1 });
}, 120_000);
