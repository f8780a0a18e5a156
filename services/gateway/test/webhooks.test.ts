import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import { eventually } from "@bas/testing";
import { type Stack, startStack } from "./harness";
import { type RunnerReports, runnerReports } from "./runner-driver";

/** Webhooks: every status change of a run POSTed once, signed; a receiver that was down gets the backlog. */
interface Received {
  path: string;
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
      // A path that is not the receiver's own: what an endpoint registered with a wrong URL gets.
      const status = req.url === "/gone" ? 404 : answering;
      if (status === 200) {
        received.push({
          path: String(req.url),
          signature: String(req.headers["x-browser-use-signature"]),
          timestamp: String(req.headers["x-browser-use-timestamp"]),
          raw,
          body: JSON.parse(raw),
        });
      }
      res.writeHead(status).end();
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

async function register(key?: string, events?: string[]) {
  const reply = await stack.request("POST", "/api/v4/webhooks", { body: { url: receiverUrl, events }, key });
  expect(reply.status).toBe(200);
  return reply.body as { id: string; url: string; secret: string; events: string[] };
}

type LoggedDelivery = { id: string; eventType: string; state: string; attempts: number; body: string };
const deliveriesOf = async (hookId: string): Promise<LoggedDelivery[]> =>
  (await stack.request("GET", `/api/v4/webhooks/${hookId}/deliveries`)).body.deliveries;
/** The endpoint's log once every delivery in it is over (delivered or failed). */
const settledLog = (hookId: string) =>
  eventually(
    () => deliveriesOf(hookId),
    (list) => list.every((d) => d.state !== "pending"),
  );

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
    { id: hook.id, url: receiverUrl, createdAt: expect.any(String), events: [] },
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

test("an endpoint gets only the event types it chose; an unknown type is a 422 that names it", async () => {
  const runsOnly = await register(undefined, ["run.status_update"]);
  const tasksOnly = await register(undefined, ["agent.task.status_update"]);
  expect(runsOnly.events).toEqual(["run.status_update"]);
  const listed = (await stack.request("GET", "/api/v4/webhooks")).body.webhooks;
  expect(listed.find((w: { id: string }) => w.id === tasksOnly.id).events).toEqual(["agent.task.status_update"]);

  const run = await completedRun();
  const session = await stack.request("POST", "/api/v3/sessions", { body: { keepAlive: true } });
  expect(session.status).toBe(200);
  const runTypes = await eventually(
    async () => (await settledLog(runsOnly.id)).map((d) => d.eventType),
    (types) => types.length === 5,
  );
  expect(runTypes.sort()).toEqual([
    "run.status_update",
    "run.status_update",
    "run.status_update",
    "run.status_update",
    "test",
  ]);
  const taskLog = await eventually(
    () => settledLog(tasksOnly.id),
    (list) => list.some((d) => d.eventType === "agent.task.status_update"),
  );
  expect(new Set(taskLog.map((d) => d.eventType))).toEqual(new Set(["test", "agent.task.status_update"]));
  expect(taskLog.some((d) => d.body.includes(session.body.id))).toBe(true);
  expect(taskLog.some((d) => d.body.includes(run.id))).toBe(false);

  const unknown = await stack.request("POST", "/api/v4/webhooks", {
    body: { url: receiverUrl, events: ["run.status_update", "session.deleted"] },
  });
  expect(unknown.status).toBe(422);
  expect(unknown.body.detail[0]).toMatchObject({ loc: ["body", "events", 1] });
  await stack.request("PATCH", `/api/v3/sessions/${session.body.id}`, { body: { action: "stop" } });
  for (const hook of [runsOnly, tasksOnly]) await stack.request("DELETE", `/api/v4/webhooks/${hook.id}`);
});

test("a rotated secret signs every delivery from then on; the old one none", async () => {
  const hook = await register(undefined, ["run.status_update"]);
  const rotated = await stack.request("POST", `/api/v4/webhooks/${hook.id}/rotate-secret`);
  expect(rotated.status).toBe(200);
  expect(rotated.body).toEqual({ ...hook, secret: expect.stringMatching(/^whsec_/) });
  expect(rotated.body.secret).not.toBe(hook.secret);

  const run = await completedRun();
  const updates = await eventually(
    async () => runUpdates(run.id),
    (list) => list.length >= 4,
  );
  for (const u of updates) expect([verifies(u, rotated.body.secret), verifies(u, hook.secret)]).toEqual([true, false]);

  const key = await stack.newProjectKey();
  expect((await stack.request("POST", `/api/v4/webhooks/${hook.id}/rotate-secret`, { key })).status).toBe(404);
  await stack.request("DELETE", `/api/v4/webhooks/${hook.id}`);
});

test("a delivery the receiver lost is sent again, the same body; not while it is still pending", async () => {
  const hook = await register(undefined, ["run.status_update"]);
  const run = await completedRun();
  const log = await eventually(
    () => settledLog(hook.id),
    (list) => list.length === 5,
  );
  const completed = log.find((d) => d.body.includes('"status":"completed"'));
  if (!completed) throw new Error("no delivery of the completed status");
  const resend = () => stack.request("POST", `/api/v4/webhooks/${hook.id}/deliveries/${completed.id}/resend`);

  // The receiver is down now: the resent delivery stays pending, retried on its own.
  answering = 503;
  const resent = await resend();
  expect(resent.status).toBe(200);
  expect(resent.body).toMatchObject({ id: completed.id, state: "pending", attempts: 0, body: completed.body });
  await eventually(
    async () => (await deliveriesOf(hook.id)).find((d) => d.id === completed.id),
    (d) => (d?.attempts ?? 0) >= 1,
  );
  const again = await resend();
  expect([again.status, again.body.detail]).toEqual([409, expect.stringContaining("still pending")]);

  answering = 200;
  const copies = await eventually(
    async () => runUpdates(run.id).filter((u) => u.body.payload.status === "completed"),
    (list) => list.length === 2,
  );
  expect(copies[1].raw).toBe(copies[0].raw);
  expect(verifies(copies[1], hook.secret)).toBe(true);
  expect((await settledLog(hook.id)).find((d) => d.id === completed.id)?.state).toBe("delivered");

  const key = await stack.newProjectKey();
  expect(
    (await stack.request("POST", `/api/v4/webhooks/${hook.id}/deliveries/${completed.id}/resend`, { key })).status,
  ).toBe(404);
  const unknown = `/api/v4/webhooks/${hook.id}/deliveries/00000000-0000-4000-8000-000000000000/resend`;
  expect((await stack.request("POST", unknown)).status).toBe(404);
  await stack.request("DELETE", `/api/v4/webhooks/${hook.id}`);
});

test("a project cannot pass 20 endpoints, even registering them all at once", async () => {
  const key = await stack.newProjectKey();
  const replies = await Promise.all(
    Array.from({ length: 24 }, () => stack.request("POST", "/api/v4/webhooks", { body: { url: receiverUrl }, key })),
  );
  expect(replies.filter((r) => r.status === 200)).toHaveLength(20);
  expect(new Set(replies.filter((r) => r.status !== 200).map((r) => r.status))).toEqual(new Set([422]));
  expect((await stack.request("GET", "/api/v4/webhooks", { key })).body.webhooks).toHaveLength(20);
});

test("an endpoint's URL and event types change in place: what was pending follows the URL, signed as before", async () => {
  const wrongUrl = receiverUrl.replace(/\/hooks$/, "/gone");
  const created = await stack.request("POST", "/api/v4/webhooks", {
    body: { url: wrongUrl, events: ["run.status_update"] },
  });
  const hook = created.body as { id: string; createdAt: string; secret: string };
  const run = await completedRun();
  await eventually(
    () => deliveriesOf(hook.id),
    (list) => list.length === 5 && list.every((d) => d.state === "pending" && d.attempts >= 1),
  );
  const update = (body: object, key?: string | null) =>
    stack.request("PATCH", `/api/v4/webhooks/${hook.id}`, { body, key });

  const moved = await update({ url: receiverUrl });
  expect(moved.status).toBe(200);
  expect(moved.body).toEqual({
    id: hook.id,
    url: receiverUrl,
    createdAt: hook.createdAt,
    events: ["run.status_update"],
  });
  const updates = await eventually(
    async () => runUpdates(run.id),
    (list) => list.length >= 4,
  );
  expect(updates.map((u) => u.body.payload.status).sort()).toEqual(["completed", "dispatching", "queued", "running"]);
  expect(updates.every((u) => u.path === "/hooks" && verifies(u, hook.secret))).toBe(true);
  // The log kept the failed attempts at the old URL; the new URL also got a test event of its own.
  const log = await eventually(
    () => settledLog(hook.id),
    (list) => list.length === 6,
  );
  expect(log.every((d) => d.state === "delivered")).toBe(true);
  expect(log.filter((d) => d.eventType === "test")).toHaveLength(2);
  expect(log.filter((d) => d.eventType === "run.status_update").every((d) => d.attempts >= 2)).toBe(true);

  const narrowed = await update({ events: ["agent.task.status_update"] });
  expect(narrowed.body).toEqual({ ...moved.body, events: ["agent.task.status_update"] });
  const later = await completedRun();
  // Its read model shows it completed: the deliveries of its changes were queued (or not) with it.
  await eventually(
    async () => (await stack.request("GET", `/api/v4/runs/${later.id}`)).body.status,
    (status) => status === "completed",
  );
  const session = await stack.request("POST", "/api/v3/sessions", { body: { keepAlive: true } });
  const narrowedLog = await eventually(
    () => settledLog(hook.id),
    (list) => list.some((d) => d.body.includes(session.body.id)),
  );
  expect(narrowedLog.some((d) => d.body.includes(later.id))).toBe(false);
  // The URL did not change: no new test event.
  expect(narrowedLog.filter((d) => d.eventType === "test")).toHaveLength(2);

  const invalid = async (body: object, loc: (string | number)[], msg: string) => {
    const reply = await update(body);
    expect([reply.status, reply.body.detail?.[0]?.loc]).toEqual([422, loc]);
    expect(reply.body.detail[0].msg).toContain(msg);
  };
  await invalid({}, ["body"], "give url, events or both");
  await invalid({ url: "http://10.1.2.3/x" }, ["body", "url"], "10.1.2.3:80 is a private address");
  await invalid({ events: ["session.deleted"] }, ["body", "events", 0], "");
  await invalid({ url: receiverUrl, secret: "mine" }, ["body", "secret"], "");
  expect((await stack.request("PATCH", "/api/v4/webhooks/nope", { body: { events: [] } })).status).toBe(422);
  expect((await update({ events: [] }, await stack.newProjectKey())).status).toBe(404);
  expect((await update({ events: [] }, null)).status).toBe(401);
  expect((await stack.request("GET", "/api/v4/webhooks")).body.webhooks).toContainEqual(narrowed.body);

  await stack.request("PATCH", `/api/v3/sessions/${session.body.id}`, { body: { action: "stop" } });
  await stack.request("DELETE", `/api/v4/webhooks/${hook.id}`);
  expect((await update({ events: [] })).status).toBe(404);
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
