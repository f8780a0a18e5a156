import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import { eventually } from "@bas/testing";
import { type Stack, startStack } from "./harness";
import { type RunnerReports, runnerReports } from "./runner-driver";

/** Webhooks: every status change of a run POSTed once, signed; a receiver that was down gets the backlog. */
interface Received {
  signature: string;
  timestamp: string;
  raw: string;
  body: { id: string; type: string; timestamp: string; payload: Record<string, unknown> };
}

let stack: Stack;
let runner: RunnerReports;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
let answering = 200;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => {
      raw += c;
    });
    req.on("end", () => {
      if (answering === 200) {
        received.push({
          signature: String(req.headers["x-browser-use-signature"]),
          timestamp: String(req.headers["x-browser-use-timestamp"]),
          raw,
          body: JSON.parse(raw),
        });
      }
      res.writeHead(answering).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const port = (receiver.address() as { port: number }).port;
  receiverUrl = `http://127.0.0.1:${port}/hooks`;
  stack = await startStack({
    sessionsEnv: {
      MAX_ACTIVE_SESSIONS_PER_PROJECT: "30",
      // The receiver is on loopback, which an endpoint may only use when the operator opens it.
      WEBHOOK_EGRESS_ALLOW: `127.0.0.1:${port}`,
      WEBHOOK_RETRY_BASE_MS: "100",
      WEBHOOK_RETRY_MAX_MS: "400",
    },
  });
  runner = runnerReports(stack);
});
afterAll(async () => {
  runner.close();
  await stack.close();
  await new Promise((resolve) => receiver.close(resolve));
});

const verifies = (r: Received, secret: string) =>
  createHmac("sha256", secret).update(`${r.timestamp}.${r.raw}`).digest("hex") === r.signature;

async function register(key?: string) {
  const reply = await stack.request("POST", "/api/v4/webhooks", { body: { url: receiverUrl }, key });
  expect(reply.status).toBe(200);
  return reply.body as { id: string; url: string; secret: string };
}

const runUpdates = (runId: string) =>
  received.filter((r) => r.body.type === "run.status_update" && r.body.payload.run_id === runId);

async function completedRun() {
  const run = (await stack.request("POST", "/api/v4/runs", { body: { task: "hooked" } })).body;
  await runner.sandboxReady({ sessionId: run.sessionId, browserId: `b-${run.id}` });
  await runner.taskStarted({ sessionId: run.sessionId, taskId: run.id, title: "Hooked", attempt: 1 });
  await runner.taskCompleted({ sessionId: run.sessionId, taskId: run.id, output: "done", success: true });
  return run as { id: string; sessionId: string };
}

test("every status change of a run reaches the endpoint once, signed with its secret; the test event comes first", async () => {
  const hook = await register();
  expect(hook.secret).toMatch(/^whsec_/);
  expect((await stack.request("GET", "/api/v4/webhooks")).body.webhooks).toEqual([
    { id: hook.id, url: receiverUrl, createdAt: expect.any(String) },
  ]);
  await eventually(
    async () => received.filter((r) => r.body.type === "test").length,
    (n) => n === 1,
  );
  const run = await completedRun();
  const updates = await eventually(
    async () => runUpdates(run.id),
    (list) => list.length >= 4,
  );
  expect(updates.map((u) => u.body.payload.status).sort()).toEqual(["completed", "dispatching", "queued", "running"]);
  for (const u of [...updates, ...received.filter((r) => r.body.type === "test")]) {
    expect(verifies(u, hook.secret)).toBe(true);
    // The body is canonical JSON: keys sorted, no whitespace, as the hosted service's verification snippet expects.
    expect(u.raw).toBe(JSON.stringify(sortKeys(u.body)));
  }
  expect(updates[0].body.payload).toMatchObject({ run_id: run.id, session_id: run.sessionId });
  // Nothing arrives twice, and the log says each was delivered at the first attempt.
  await new Promise((r) => setTimeout(r, 500));
  expect(runUpdates(run.id)).toHaveLength(4);
  // The sender records a delivery once the receiver's answer is in, which may be a moment after the receiver has it.
  const log = await eventually(
    async () => (await stack.request("GET", `/api/v4/webhooks/${hook.id}/deliveries`)).body.deliveries,
    (list: Array<{ state: string; attempts: number }>) => list.every((d) => d.state === "delivered"),
  );
  expect(log).toHaveLength(5);
  expect(log.every((d) => d.attempts === 1)).toBe(true);
  expect((await stack.request("DELETE", `/api/v4/webhooks/${hook.id}`)).status).toBe(204);
});

test("a receiver that is down for a while gets the backlog when it is back; the log shows the failed attempts", async () => {
  const hook = await register();
  await eventually(
    async () => received.filter((r) => r.body.type === "test").length,
    (n) => n === 2,
  );
  answering = 503;
  const run = await completedRun();
  const failing = await eventually(
    async () => (await stack.request("GET", `/api/v4/webhooks/${hook.id}/deliveries`)).body.deliveries,
    (list: Array<{ attempts: number; state: string }>) =>
      list.filter((d) => d.state === "pending" && d.attempts >= 2).length === 4,
  );
  expect(failing[0]).toMatchObject({ state: "pending", lastStatus: 503, lastError: "HTTP 503" });
  expect(runUpdates(run.id)).toEqual([]);

  answering = 200;
  const updates = await eventually(
    async () => runUpdates(run.id),
    (list) => list.length >= 4,
  );
  expect(updates.map((u) => u.body.payload.status).sort()).toEqual(["completed", "dispatching", "queued", "running"]);
  expect(updates.every((u) => verifies(u, hook.secret))).toBe(true);
  const log = await eventually(
    async () => (await stack.request("GET", `/api/v4/webhooks/${hook.id}/deliveries`)).body.deliveries,
    (list: Array<{ state: string }>) => list.every((d) => d.state === "delivered"),
  );
  expect(log).toHaveLength(5);
  await stack.request("DELETE", `/api/v4/webhooks/${hook.id}`);
});

test("closed addresses are refused with a 422 that says why; another project sees none of these endpoints", async () => {
  for (const [url, why] of [
    ["http://127.0.0.1:1/x", "127.0.0.1:1 is a loopback address; open it with WEBHOOK_EGRESS_ALLOW"],
    ["http://10.1.2.3/x", "10.1.2.3:80 is a private address"],
    ["http://169.254.169.254/latest", "a link-local address (cloud metadata lives there)"],
    ["http://[::1]:8080/", "a loopback address"],
    ["ftp://example.com/", "url must be an http or https URL"],
  ]) {
    const reply = await stack.request("POST", "/api/v4/webhooks", { body: { url } });
    expect([url, reply.status]).toEqual([url, 422]);
    expect(reply.body.detail[0]).toMatchObject({ loc: ["body", "url"], type: "value_error" });
    expect(reply.body.detail[0].msg).toContain(why);
  }
  const mine = await register();
  const key = await stack.newProjectKey();
  expect((await stack.request("GET", "/api/v4/webhooks", { key })).body).toEqual({ webhooks: [] });
  expect((await stack.request("GET", `/api/v4/webhooks/${mine.id}/deliveries`, { key })).status).toBe(404);
  expect((await stack.request("DELETE", `/api/v4/webhooks/${mine.id}`, { key })).status).toBe(404);
  expect((await stack.request("GET", "/api/v4/webhooks", { key: null })).status).toBe(401);
  await stack.request("DELETE", `/api/v4/webhooks/${mine.id}`);
});

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
