import { sql } from "kysely";
import { billing } from "@bas/proto";
import { eventually } from "@bas/testing";
import { createRequest, type Harness, newProject, startHarness } from "./harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const project = newProject();
const get = (sessionId: string) => h.api.getSession({ projectId: project, sessionId });

/** Billing's side: a charge on the session's ledger carrying the running totals. */
async function charge(sessionId: string, total: string) {
  const ledger = { type: "ledger-session", id: sessionId };
  const totals = {
    inputTokens: 0,
    outputTokens: 0,
    proxyUsedMb: "1.5",
    llmCostUsd: total,
    proxyCostUsd: "0",
    browserCostUsd: "0",
    totalCostUsd: total,
  };
  const data = billing.ChargeRecorded.toJSON(
    billing.ChargeRecorded.fromPartial({ usageId: "u", projectId: project, kind: "llm", amountUsd: total, totals }),
  );
  await h.store.append(ledger, [{ type: "ChargeRecorded", data }], await h.store.version(ledger));
}

test("restart in the middle of a task: nothing is lost and the session carries on", async () => {
  const s = await h.api.createSession(createRequest(project, { task: "survive a restart", keepAlive: true }));
  const work = await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });
  await h.reports.taskStarted({ sessionId: s.id, taskId: work.taskId, title: "Survivor", attempt: 1 });
  await h.reports.stepRecorded({ sessionId: s.id, taskId: work.taskId, step: 1, summary: "before", messages: [] });
  // Created just before the restart: its assignment must still reach the queue, once.
  const queued = await h.api.createSession(createRequest(project, { task: "dispatched across the restart" }));
  const before = await get(s.id);

  await h.restart();

  expect(await get(s.id)).toEqual(before);
  await h.reports.stepRecorded({ sessionId: s.id, taskId: work.taskId, step: 2, summary: "after", messages: [] });
  await h.reports.taskCompleted({ sessionId: s.id, taskId: work.taskId, output: "made it", success: true });
  expect(await get(s.id)).toMatchObject({ status: "idle", stepCount: 2, title: "Survivor", output: "made it" });

  const next = await h.takeAssignment();
  expect(next).toMatchObject({ sessionId: queued.id, task: "dispatched across the restart" });
  await h.api.createSession(createRequest(project, { task: "follow-up after restart", sessionId: s.id }));
  expect(await h.takeAssignment()).toMatchObject({ sessionId: s.id, task: "follow-up after restart" });
  expect(await h.queuedAssignments()).toEqual([]);
});

test("each task is put on the work queue exactly once, even when every event is delivered again", async () => {
  const a = await h.api.createSession(createRequest(project, { task: "queued a" }));
  const b = await h.api.createSession(createRequest(project, { task: "queued b" }));
  const queued = await eventually(h.queuedAssignments, (q) => q.length === 2);
  expect(queued.map((q) => q.sessionId).sort()).toEqual([a.id, b.id].sort());

  // Forget the reactor's progress (consumer and checkpoint), as if it had crashed before recording any of it.
  await h.service.close();
  await h.infra.jsm.consumers.delete(h.infra.streams.events.stream, "proj_sessions-dispatch");
  const checkpoint = `${h.infra.namespace}/sessions-dispatch`;
  await sql`delete from projection_checkpoints where name = ${checkpoint}`.execute(h.infra.db);
  await h.restart();

  const c = await h.api.createSession(createRequest(project, { task: "queued c" }));
  // The reactor reads events in order: once c's task is queued, a's and b's events were handled again before it.
  const after = await eventually(h.queuedAssignments, (q) => q.some((x) => x.sessionId === c.id));
  expect(after.map((x) => x.taskId).sort()).toEqual([...new Set(after.map((x) => x.taskId))].sort());
  expect(after.map((x) => x.sessionId).sort()).toEqual([a.id, b.id, c.id].sort());
  for (let i = 0; i < 3; i++) await h.takeAssignment();
  for (const id of [a.id, b.id, c.id]) await h.api.stopSession({ projectId: project, sessionId: id, strategy: "" });
});

test("drop the read-model tables and rebuild from the stream: every response is identical", async () => {
  const done = await h.api.createSession(createRequest(project, { task: "done", keepAlive: true }));
  const work = await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: done.id, browserId: "b" });
  await h.reports.taskStarted({ sessionId: done.id, taskId: work.taskId, title: "Done", attempt: 1 });
  await h.reports.stepRecorded({
    sessionId: done.id,
    taskId: work.taskId,
    step: 1,
    summary: "did it",
    screenshotRef: "s/1.png",
    messages: [{ role: "ai", type: "browser_action", data: "click", summary: "Clicking", hidden: false }],
  });
  await h.reports.usageReported({ sessionId: done.id, taskId: work.taskId, inputTokens: 1200, outputTokens: 80 });
  await h.reports.taskCompleted({
    sessionId: done.id,
    taskId: work.taskId,
    output: "result",
    success: true,
    summary: "All done",
  });
  await charge(done.id, "0.0123");
  await eventually(
    () => get(done.id),
    (s) => s.totalCostUsd === "0.0123",
  );
  const deleted = await h.api.createSession(createRequest(project, { task: "deleted" }));
  await h.takeAssignment();
  await h.api.deleteSession({ projectId: project, sessionId: deleted.id });

  const snapshot = async () => {
    const list = await h.api.listSessions({ projectId: project, page: 1, pageSize: 100 });
    const singles = await Promise.all(list.sessions.map((s) => get(s.id)));
    const messages = await Promise.all(
      list.sessions.map((s) => h.api.listMessages({ projectId: project, sessionId: s.id, limit: 100, latest: false })),
    );
    return { list, singles, messages };
  };
  const before = await snapshot();
  expect(before.list.total).toBeGreaterThanOrEqual(4);
  expect(before.singles.find((s) => s.id === done.id)).toMatchObject({ totalInputTokens: 1200, llmCostUsd: "0.0123" });

  for (const table of ["sessions_view", "session_messages", "session_costs"]) {
    await sql`drop table ${sql.table(table)}`.execute(h.infra.db);
  }
  await h.service.rebuildReadModels();

  expect(await snapshot()).toEqual(before);
});
