import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { type Reply, type Stack, startStack } from "./harness";
import { validateOpenApi } from "./openapi-validator";
import { type RunnerReports, runnerReports } from "./runner-driver";

/** The v4 API's own OpenAPI document, and every v4 answer checked against the schema it publishes for it. */
let stack: Stack;
let runner: RunnerReports;
let doc: any;

beforeAll(async () => {
  stack = await startStack({ sessionsEnv: { MAX_ACTIVE_SESSIONS_PER_PROJECT: "30" } });
  runner = runnerReports(stack);
  const reply = await stack.request("GET", "/api/v4/openapi.json", { key: null });
  expect(reply.status).toBe(200);
  doc = reply.body;
});
afterAll(async () => {
  runner.close();
  await stack.close();
});

const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
const checked = new Set<string>();

/** The reply's body checked against what the document says `method path` answers with its status. */
function conformance(method: string, path: string, reply: Reply) {
  const operation = doc.paths[path]?.[method.toLowerCase()];
  const response = operation?.responses?.[String(reply.status)];
  if (!response) return [`${method} ${path}: status ${reply.status} is not documented`];
  const schema = response.content?.["application/json"]?.schema;
  if (!schema) return [`${method} ${path}: ${reply.status} has no JSON schema`];
  if (!ajv.getSchema("v4")) ajv.addSchema({ $id: "v4", components: doc.components }, "v4");
  const validate = ajv.compile(rebase(schema));
  checked.add(`${method} ${path} ${reply.status}`);
  return validate(reply.body) ? [] : (validate.errors ?? []);
}

/** A response schema whose `#/components/...` refs point into the registered document. */
function rebase(schema: object) {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"v4#/components/'));
}

async function call(method: string, template: string, path: string, body?: object, headers?: Record<string, string>) {
  const reply = await stack.request(method, path, { body, headers });
  expect([method, path, conformance(method, template, reply)]).toEqual([method, path, []]);
  return reply;
}

test("the document is valid OpenAPI 3.1 and holds exactly the v4 paths; v3's holds none of them", async () => {
  expect(await validateOpenApi(doc)).toEqual({ valid: true });
  const paths = Object.keys(doc.paths);
  expect(paths.every((p) => p.startsWith("/api/v4/"))).toBe(true);
  expect(paths).toEqual(
    expect.arrayContaining([
      "/api/v4/runs",
      "/api/v4/runs/{id}/status",
      "/api/v4/runs/{id}/events",
      "/api/v4/runs/{id}/attachments",
      "/api/v4/sessions/{id}/queue",
      "/api/v4/sessions/{id}/queue/{messageId}",
      "/api/v4/browsers",
    ]),
  );
  const v3 = (await stack.request("GET", "/api/v3/openapi.json", { key: null })).body;
  expect(Object.keys(v3.paths).filter((p) => p.startsWith("/api/v4/"))).toEqual([]);
  const page = await stack.request("GET", "/api/v4/docs", { key: null });
  expect(page.text).toContain('url: "openapi.json"');
  expect((await fetch(`${stack.baseUrl}/api/v4/docs/swagger-ui.css`)).status).toBe(200);
});

test("every answer of the runs and sessions API conforms to the schema the document gives for it", async () => {
  const run = (await call("POST", "/api/v4/runs", "/api/v4/runs", { task: "conform" })).body;
  await runner.sandboxReady({ sessionId: run.sessionId, browserId: `b-${run.id}` });
  await runner.taskStarted({ sessionId: run.sessionId, taskId: run.id, title: "Conforming", attempt: 1 });
  await runner.stepRecorded({
    sessionId: run.sessionId,
    taskId: run.id,
    step: 1,
    summary: "Step 1",
    messages: [{ role: "ai", type: "browser_action", data: "{}", summary: "acting", hidden: false }],
  });
  const s = `/api/v4/sessions/${run.sessionId}`;
  const r = `/api/v4/runs/${run.id}`;
  await call("GET", "/api/v4/runs/{id}/status", `${r}/status`);
  await call("GET", "/api/v4/runs/{id}", r);
  await call("GET", "/api/v4/runs", "/api/v4/runs?limit=1");
  await call("GET", "/api/v4/runs/{id}/events", `${r}/events?limit=2`);
  await call("GET", "/api/v4/runs/{id}/attachments", `${r}/attachments`);
  await call("GET", "/api/v4/sessions", "/api/v4/sessions");
  await call("GET", "/api/v4/sessions/{id}", s);

  const queued = (await call("POST", "/api/v4/sessions/{id}/queue", `${s}/queue`, { text: "then this" })).body;
  const taken = (await call("POST", "/api/v4/sessions/{id}/queue", `${s}/queue`, { text: "or not" })).body;
  await call("GET", "/api/v4/sessions/{id}/queue", `${s}/queue`);
  await call("GET", "/api/v4/sessions/{id}/queue/{messageId}", `${s}/queue/${queued.id}`);
  await call("DELETE", "/api/v4/sessions/{id}/queue/{messageId}", `${s}/queue/${taken.id}`);
  await call("POST", "/api/v4/runs/{id}/cancel", `${r}/cancel`);
  // The cancel freed the session: the queued message is a run now, and can no longer be taken back.
  const refused = await call("DELETE", "/api/v4/sessions/{id}/queue/{messageId}", `${s}/queue/${queued.id}`);
  expect(refused.status).toBe(409);

  // Errors conform too: a missing run, a bad body, a bad id, a follow-up on a busy session.
  const missing = await call("GET", "/api/v4/runs/{id}", "/api/v4/runs/00000000-0000-4000-8000-000000000000");
  expect(missing.status).toBe(404);
  const noRun = "/api/v4/runs/00000000-0000-4000-8000-000000000000/attachments";
  expect((await call("GET", "/api/v4/runs/{id}/attachments", noRun)).status).toBe(404);
  expect((await call("POST", "/api/v4/runs", "/api/v4/runs", { task: "" })).status).toBe(422);
  expect((await call("GET", "/api/v4/runs/{id}/status", "/api/v4/runs/nope/status")).status).toBe(422);
  const busy = await call("POST", "/api/v4/runs", "/api/v4/runs", { task: "too soon", sessionId: run.sessionId });
  expect(busy.status).toBe(409);
  expect((await call("POST", "/api/v4/sessions/{id}/queue", `${s}/queue`, { text: "x", y: 1 })).status).toBe(422);

  // Webhooks (a public address: registered, though this machine cannot reach it).
  const hook = (await call("POST", "/api/v4/webhooks", "/api/v4/webhooks", { url: "http://93.184.216.34/h" })).body;
  await call("GET", "/api/v4/webhooks", "/api/v4/webhooks");
  const log = (await call("GET", "/api/v4/webhooks/{id}/deliveries", `/api/v4/webhooks/${hook.id}/deliveries`)).body;
  await call("POST", "/api/v4/webhooks/{id}/rotate-secret", `/api/v4/webhooks/${hook.id}/rotate-secret`);
  // Its test event is still being tried: not one to resend yet.
  const resend = `/api/v4/webhooks/${hook.id}/deliveries/${log.deliveries[0].id}/resend`;
  expect((await call("POST", "/api/v4/webhooks/{id}/deliveries/{deliveryId}/resend", resend)).status).toBe(409);
  const chosen = { url: "http://93.184.216.34/runs", events: ["run.status_update"] };
  const runsOnly = (await call("POST", "/api/v4/webhooks", "/api/v4/webhooks", chosen)).body;
  const patched = await call("PATCH", "/api/v4/webhooks/{id}", `/api/v4/webhooks/${runsOnly.id}`, { events: [] });
  expect(patched.body.events).toEqual([]);
  expect((await call("PATCH", "/api/v4/webhooks/{id}", `/api/v4/webhooks/${runsOnly.id}`, {})).status).toBe(422);
  expect((await stack.request("DELETE", `/api/v4/webhooks/${runsOnly.id}`)).status).toBe(204);
  const closed = await call("POST", "/api/v4/webhooks", "/api/v4/webhooks", { url: "http://10.0.0.1/h" });
  expect(closed.status).toBe(422);
  expect((await stack.request("DELETE", `/api/v4/webhooks/${hook.id}`)).status).toBe(204);

  // And the check can fail: a run without its required fields does not conform.
  expect(conformance("GET", "/api/v4/runs/{id}", { status: 200, body: { id: run.id } } as Reply)).not.toEqual([]);
  expect(checked.size).toBeGreaterThanOrEqual(23);
});
