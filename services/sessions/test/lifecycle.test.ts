import { randomUUID } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { BROWSER_AGGREGATE, billing, browserPool, LEDGER_AGGREGATES } from "@bas/proto";
import { checkGrpcHealth } from "@bas/service-kit";
import { eventually, scrapeMetrics, sumOf } from "@bas/testing";
import { sql } from "kysely";
import { createRequest, failure, type Harness, newProject, startHarness } from "./harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const project = newProject();
const get = (sessionId: string, projectId = project) => h.api.getSession({ projectId, sessionId });
const step = (sessionId: string, taskId: string, n: number, summary = `step ${n}`) =>
  h.reports.stepRecorded({
    sessionId,
    taskId,
    step: n,
    summary,
    messages: [{ role: "ai", type: "browser_action", data: `click ${n}`, summary, hidden: false }],
    screenshotRef: `shots/${taskId}/${n}.png`,
  });

test("created → running → stopped: a task without keepAlive, reported the way the runner does", async () => {
  const created = await h.api.createSession(createRequest(project, { task: "Find the price of the blue shoes" }));
  expect(created).toMatchObject({ status: "created", stepCount: 0 });
  // Its own credential in the link: the live view opens with the link alone.
  expect(created.liveUrl).toMatch(new RegExp(`^http://bas.test/live/sessions/${created.id}/[A-Za-z0-9_-]{32}$`));
  expect(created.isTaskSuccessful).toBeUndefined();
  expect(created.title).toBeUndefined();

  const work = await h.takeAssignment();
  expect(work).toMatchObject({ sessionId: created.id, projectId: project, task: "Find the price of the blue shoes" });
  expect((await get(created.id)).status).toBe("created");

  await h.reports.sandboxReady({ sessionId: created.id, browserId: "browser-1" });
  expect((await get(created.id)).status).toBe("running");
  await h.reports.taskStarted({ sessionId: created.id, taskId: work.taskId, title: "Blue shoes price", attempt: 1 });
  await step(created.id, work.taskId, 1, "Opening the shop");
  await step(created.id, work.taskId, 2, "Reading the price");
  const running = await get(created.id);
  expect(running).toMatchObject({
    status: "running",
    title: "Blue shoes price",
    stepCount: 2,
    lastStepSummary: "Reading the price",
    screenshotRef: `shots/${work.taskId}/2.png`,
  });
  expect(running.isTaskSuccessful).toBeUndefined();

  await h.reports.taskCompleted({ sessionId: created.id, taskId: work.taskId, output: "$19.99", success: true });
  expect(await get(created.id)).toMatchObject({ status: "stopped", output: "$19.99", isTaskSuccessful: true });
});

test("a session without keepAlive reads running, never idle, from its task's end until its browser's cost is final", async () => {
  const s = await h.api.createSession(createRequest(project, { task: "a" }));
  const work = await h.takeAssignment();
  // browser-pool opens a browser for it; billing has not charged that browser's last usage yet.
  const browserId = randomUUID();
  const requested = browserPool.BrowserRequested.fromPartial({ projectId: project, sessionId: s.id });
  await h.store.append(
    { type: BROWSER_AGGREGATE, id: browserId },
    [{ type: "BrowserRequested", data: browserPool.BrowserRequested.toJSON(requested) }],
    0,
  );
  await eventually(
    () => sql`select 1 from session_browsers where browser_id = ${browserId}`.execute(h.infra.db),
    (result) => result.rows.length === 1,
  );
  await h.reports.sandboxReady({ sessionId: s.id, browserId });
  await h.reports.taskCompleted({ sessionId: s.id, taskId: work.taskId, output: "done", success: true });
  expect((await get(s.id)).status).toBe("running");

  const charge = billing.ChargeRecorded.fromPartial({
    projectId: project,
    kind: "browser",
    browserId,
    lastReport: true,
  });
  await h.store.append(
    { type: LEDGER_AGGREGATES.session, id: s.id },
    [{ type: "ChargeRecorded", data: billing.ChargeRecorded.toJSON(charge) }],
    0,
  );
  await eventually(
    () => get(s.id),
    (session) => session.status === "stopped",
  );
});

test("keepAlive: running → idle, another task to the same session (idle → running → idle), then stop", async () => {
  const s = await h.api.createSession(createRequest(project, { task: "first", keepAlive: true }));
  const first = await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });
  await h.reports.taskStarted({ sessionId: s.id, taskId: first.taskId, attempt: 1 });
  await h.reports.taskCompleted({ sessionId: s.id, taskId: first.taskId, output: "one", success: true });
  expect(await get(s.id)).toMatchObject({ status: "idle", output: "one", isTaskSuccessful: true, title: "first" });

  const again = await h.api.createSession(createRequest(project, { task: "second", sessionId: s.id, keepAlive: true }));
  expect(again).toMatchObject({ id: s.id, status: "running" });
  expect(again.output).toBeUndefined();
  expect(again.isTaskSuccessful).toBeUndefined();
  const second = await h.takeAssignment();
  expect(second).toMatchObject({ sessionId: s.id, task: "second" });
  expect(second.taskId).not.toBe(first.taskId);
  await h.reports.taskStarted({ sessionId: s.id, taskId: second.taskId, attempt: 1 });
  await h.reports.taskCompleted({ sessionId: s.id, taskId: second.taskId, output: "two", success: false });
  expect(await get(s.id)).toMatchObject({ status: "idle", output: "two", isTaskSuccessful: false });

  const stopped = await h.api.stopSession({ projectId: project, sessionId: s.id, strategy: "session" });
  expect(stopped.status).toBe("stopped");
  const refused = await failure(h.api.createSession(createRequest(project, { task: "third", sessionId: s.id })));
  expect(refused).toMatchObject({ code: status.FAILED_PRECONDITION, kind: "illegal_state" });
});

test("allowedDomains are the session's: checked, lowercase in every assignment; a later task cannot change them", async () => {
  const browser = { proxyCountryCode: "us", record: false };
  const s = await h.api.createSession(
    createRequest(project, {
      task: "first",
      keepAlive: true,
      browser: { ...browser, allowedDomains: ["Shop.Test", "*.cdn.test", "shop.test"] },
    }),
  );
  const first = await h.takeAssignment();
  expect(first.browser?.allowedDomains).toEqual(["shop.test", "*.cdn.test"]);
  await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });
  await h.reports.taskStarted({ sessionId: s.id, taskId: first.taskId, attempt: 1 });
  await h.reports.taskCompleted({ sessionId: s.id, taskId: first.taskId, output: "one", success: true });
  await h.api.createSession(
    createRequest(project, { task: "second", sessionId: s.id, browser: { ...browser, allowedDomains: ["evil.test"] } }),
  );
  const second = await h.takeAssignment();
  expect(second.browser?.allowedDomains).toEqual(["shop.test", "*.cdn.test"]);
  await h.api.stopSession({ projectId: project, sessionId: s.id, strategy: "session" });

  const bad = await failure(
    h.api.createSession(
      createRequest(project, { task: "t", browser: { ...browser, allowedDomains: ["ok.test", "https://evil.test/"] } }),
    ),
  );
  expect(bad).toMatchObject({ code: status.INVALID_ARGUMENT, field: ["body", "allowedDomains", 1] });
  const none = await h.api.createSession(createRequest(project, { task: "no limit" }));
  expect((await h.takeAssignment()).browser?.allowedDomains).toEqual([]);
  await h.api.stopSession({ projectId: project, sessionId: none.id, strategy: "session" });
});

test("a session created without a task prepares a sandbox and becomes an idle keep-alive session", async () => {
  const s = await h.api.createSession(createRequest(project));
  expect(s).toMatchObject({ status: "created", keepAlive: true });
  const prep = await h.takeAssignment();
  expect(prep).toMatchObject({ sessionId: s.id, task: "" });
  const early = await failure(h.api.createSession(createRequest(project, { task: "too early", sessionId: s.id })));
  expect(early.code).toBe(status.FAILED_PRECONDITION);

  await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });
  expect((await get(s.id)).status).toBe("idle");
  await h.api.createSession(createRequest(project, { task: "now", sessionId: s.id }));
  const work = await h.takeAssignment();
  expect(work).toMatchObject({ sessionId: s.id, task: "now" });
  expect((await get(s.id)).status).toBe("running");
});

test("dispatching to a running session is refused (→ 409) and queues nothing", async () => {
  const s = await h.api.createSession(createRequest(project, { task: "busy", keepAlive: true }));
  await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });
  const refused = await failure(h.api.createSession(createRequest(project, { task: "more", sessionId: s.id })));
  expect(refused).toMatchObject({ code: status.FAILED_PRECONDITION, kind: "illegal_state" });
  expect(await h.queuedAssignments()).toEqual([]);
});

test("stop with strategy task: the task ends at once, the session idles, the stale runner is refused", async () => {
  const s = await h.api.createSession(createRequest(project, { task: "long task" }));
  const work = await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });
  await h.reports.taskStarted({ sessionId: s.id, taskId: work.taskId, attempt: 1 });
  await step(s.id, work.taskId, 1);

  const stopped = await h.api.stopSession({ projectId: project, sessionId: s.id, strategy: "task" });
  expect(stopped).toMatchObject({ status: "idle", isTaskSuccessful: false });
  expect(stopped.lastStepSummary).toMatch(/stopped/i);

  const stale = await failure(step(s.id, work.taskId, 2));
  expect(stale.code).toBe(status.FAILED_PRECONDITION);
  const late = await failure(
    h.reports.taskCompleted({ sessionId: s.id, taskId: work.taskId, success: true, output: "too late" }),
  );
  expect(late.code).toBe(status.FAILED_PRECONDITION);
  expect(await get(s.id)).toMatchObject({ status: "idle", stepCount: 1, isTaskSuccessful: false });
});

test("stop with strategy session from created, and stopping again changes nothing", async () => {
  const s = await h.api.createSession(createRequest(project, { task: "never starts" }));
  await h.takeAssignment();
  const stopped = await h.api.stopSession({ projectId: project, sessionId: s.id, strategy: "session" });
  expect(stopped).toMatchObject({ status: "stopped", isTaskSuccessful: false });
  const again = await h.api.stopSession({ projectId: project, sessionId: s.id, strategy: "" });
  expect(again).toEqual(stopped);
  const ready = await failure(h.reports.sandboxReady({ sessionId: s.id, browserId: "b" }));
  expect(ready.code).toBe(status.FAILED_PRECONDITION);
});

test("sandbox failure → error, from created and from running; the task in progress fails", async () => {
  const early = await h.api.createSession(createRequest(project, { task: "a" }));
  await h.takeAssignment();
  await h.reports.sandboxFailed({ sessionId: early.id, error: "no browser available" });
  expect((await get(early.id)).status).toBe("error");

  const later = await h.api.createSession(createRequest(project, { task: "b", keepAlive: true }));
  const work = await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: later.id, browserId: "b" });
  await h.reports.taskStarted({ sessionId: later.id, taskId: work.taskId, attempt: 1 });
  await h.reports.sandboxFailed({ sessionId: later.id, error: "chromium crashed" });
  expect(await get(later.id)).toMatchObject({
    status: "error",
    isTaskSuccessful: false,
    lastStepSummary: "Task failed: chromium crashed",
  });
  const refused = await failure(h.api.createSession(createRequest(project, { task: "c", sessionId: later.id })));
  expect(refused.code).toBe(status.FAILED_PRECONDITION);
});

test("a caller that has read `error` finds the message that says why, though the messages apply apart", async () => {
  const s = await h.api.createSession(createRequest(project, { keepAlive: true }));
  await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });
  let failed: Promise<unknown> = Promise.resolve();
  let read: Promise<{ messages: { type: string; data: string }[] }> | undefined;
  // The messages' read model cannot apply anything (its table locked against writes; reads go on), the session's can.
  await h.infra.db.transaction().execute(async (trx) => {
    await sql`lock table session_messages in exclusive mode`.execute(trx);
    failed = h.reports.sandboxFailed({ sessionId: s.id, error: "chromium crashed" });
    await eventually(
      () => get(s.id),
      (session) => session.status === "error",
    );
    read = h.api.listMessages({ projectId: project, sessionId: s.id, limit: 100, latest: false });
    await new Promise((resolve) => setTimeout(resolve, 300));
  });
  expect((await read!).messages.at(-1)).toMatchObject({ type: "error", data: "chromium crashed" });
  await failed;
});

test("a failed task: verdict false with the error; keepAlive decides idle or stopped", async () => {
  for (const keepAlive of [true, false]) {
    const s = await h.api.createSession(createRequest(project, { task: "fails", keepAlive }));
    const work = await h.takeAssignment();
    await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });
    await h.reports.taskFailed({ sessionId: s.id, taskId: work.taskId, error: "the site is down" });
    expect(await get(s.id)).toMatchObject({
      status: keepAlive ? "idle" : "stopped",
      isTaskSuccessful: false,
      lastStepSummary: "Task failed: the site is down",
    });
  }
});

test("delete: a running session is stopped, then it is not found, not listed, and its runner is refused", async () => {
  const s = await h.api.createSession(createRequest(project, { task: "to delete" }));
  const work = await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });
  await h.api.deleteSession({ projectId: project, sessionId: s.id });

  expect((await failure(get(s.id))).code).toBe(status.NOT_FOUND);
  const list = await h.api.listSessions({ projectId: project, page: 1, pageSize: 100 });
  expect(list.sessions.map((x) => x.id)).not.toContain(s.id);
  expect((await failure(h.api.deleteSession({ projectId: project, sessionId: s.id }))).code).toBe(status.NOT_FOUND);
  const stale = await failure(step(s.id, work.taskId, 1));
  expect(stale.code).toBe(status.FAILED_PRECONDITION);
  const events = (await h.store.load({ type: "session", id: s.id })).events.map((e) => e.type);
  expect(events.slice(-3)).toEqual(["TaskStopped", "SessionStopped", "SessionDeleted"]);
});

test("a retried create with the same idempotency key returns the same session and queues its task once", async () => {
  const request = createRequest(project, { task: "exactly once", idempotencyKey: "retry-me-1" });
  const [first, second] = await Promise.all([h.api.createSession(request), h.api.createSession(request)]);
  const third = await h.api.createSession(request);
  expect(second.id).toBe(first.id);
  expect(third.id).toBe(first.id);
  await h.takeAssignment();
  expect(await h.queuedAssignments()).toEqual([]);
  const elsewhere = await h.api.createSession(createRequest(newProject(), { task: "x", idempotencyKey: "retry-me-1" }));
  expect(elsewhere.id).not.toBe(first.id);
  await h.takeAssignment();
});

test("the gRPC health check says SERVING once the service is ready", async () => {
  expect(await checkGrpcHealth(`127.0.0.1:${h.service.grpcPort}`)).toBe(true);
});

test("/metrics: gRPC latency by method and status code, and the lag of every consumer the service reads", async () => {
  await h.api.createSession(createRequest(project, { task: "counted" }));
  await failure(get("no-such-session"));

  const samples = await scrapeMetrics(h.service.metricsPort);
  const calls = (method: string, code: string) =>
    sumOf(samples, "bas_grpc_server_duration_seconds_count", { service: "sessions", method, code });
  expect(calls("bas.v1.Sessions/CreateSession", "OK")).toBeGreaterThanOrEqual(1);
  expect(calls("bas.v1.Sessions/GetSession", "NOT_FOUND")).toBeGreaterThanOrEqual(1);
  // Every durable consumer on the events stream is one of the service's projections or reactors: each has its lag.
  const lagged = new Set(
    samples
      .filter((s) => s.name === "bas_jetstream_consumer_lag_messages" && s.labels.state === "pending")
      .map((s) => s.labels.consumer),
  );
  const durables: string[] = [];
  for await (const consumer of h.infra.jsm.consumers.list(h.infra.streams.events.stream)) {
    durables.push(consumer.name);
  }
  expect(durables.length).toBeGreaterThan(5);
  expect([...lagged].sort()).toEqual(durables.sort());
});
