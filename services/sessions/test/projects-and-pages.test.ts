import { status } from "@grpc/grpc-js";
import { createRequest, failure, type Harness, newProject, startHarness } from "./harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ MAX_ACTIVE_SESSIONS_PER_PROJECT: "3" });
});
afterAll(() => h.close());

/** Creates a session and ends its task, so it no longer counts against the active limit. */
async function finishedSession(projectId: string, task: string) {
  const s = await h.api.createSession(createRequest(projectId, { task }));
  const work = await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });
  await h.reports.taskCompleted({ sessionId: s.id, taskId: work.taskId, output: task, success: true });
  return s.id;
}

test("two projects cannot see or touch each other's sessions: NOT_FOUND, never a hint it exists", async () => {
  const [a, b] = [newProject(), newProject()];
  const s = await h.api.createSession(createRequest(a, { task: "private", keepAlive: true }));
  await h.takeAssignment();
  const calls = [
    h.api.getSession({ projectId: b, sessionId: s.id }),
    h.api.stopSession({ projectId: b, sessionId: s.id, strategy: "session" }),
    h.api.deleteSession({ projectId: b, sessionId: s.id }),
    h.api.listMessages({ projectId: b, sessionId: s.id, limit: 10, latest: false }),
    h.api.createSession(createRequest(b, { task: "hijack", sessionId: s.id })),
  ];
  for (const call of calls) expect(await failure(call)).toMatchObject({ code: status.NOT_FOUND, kind: "not_found" });
  expect((await h.api.listSessions({ projectId: b, page: 1, pageSize: 20 })).total).toBe(0);
  expect((await h.api.getSession({ projectId: a, sessionId: s.id })).status).toBe("created");
  await h.api.stopSession({ projectId: a, sessionId: s.id, strategy: "session" });
});

test("pagination: newest first, total, a last partial page, a page past the end is empty", async () => {
  const p = newProject();
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) ids.push(await finishedSession(p, `task ${i}`));
  const newestFirst = [...ids].reverse();

  const first = await h.api.listSessions({ projectId: p, page: 1, pageSize: 3 });
  expect(first).toMatchObject({ total: 7, page: 1, pageSize: 3 });
  expect(first.sessions.map((s) => s.id)).toEqual(newestFirst.slice(0, 3));
  const last = await h.api.listSessions({ projectId: p, page: 3, pageSize: 3 });
  expect(last.sessions.map((s) => s.id)).toEqual(newestFirst.slice(6));
  const past = await h.api.listSessions({ projectId: p, page: 4, pageSize: 3 });
  expect(past).toMatchObject({ sessions: [], total: 7, page: 4, pageSize: 3 });
  const defaults = await h.api.listSessions({ projectId: p, page: 0, pageSize: 0 });
  expect(defaults).toMatchObject({ total: 7, page: 1, pageSize: 20 });
  expect(defaults.sessions).toHaveLength(7);

  const bad = await failure(h.api.listSessions({ projectId: p, page: 1, pageSize: 101 }));
  expect(bad).toMatchObject({ code: status.INVALID_ARGUMENT, field: ["query", "page_size"] });
});

test("lists leave out the screenshot and the recordings; a single read has them", async () => {
  const p = newProject();
  const s = await h.api.createSession(createRequest(p, { task: "with pictures", keepAlive: true }));
  const work = await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });
  await h.reports.stepRecorded({
    sessionId: s.id,
    taskId: work.taskId,
    step: 1,
    summary: "looked",
    messages: [],
    screenshotRef: "shots/1.png",
  });
  await h.reports.recordingSaved({ sessionId: s.id, recordingRef: "recordings/1.webm" });
  expect(await h.api.getSession({ projectId: p, sessionId: s.id })).toMatchObject({
    screenshotRef: "shots/1.png",
    recordingRefs: ["recordings/1.webm"],
  });
  const [listed] = (await h.api.listSessions({ projectId: p, page: 1, pageSize: 10 })).sessions;
  expect(listed).toMatchObject({ id: s.id, recordingRefs: [], stepCount: 1 });
  expect(listed.screenshotRef).toBeUndefined();
  await h.api.stopSession({ projectId: p, sessionId: s.id, strategy: "session" });
});

test("the active-session limit: the next create is RESOURCE_EXHAUSTED until one ends", async () => {
  const p = newProject();
  const active: string[] = [];
  for (let i = 0; i < 3; i++) {
    active.push((await h.api.createSession(createRequest(p, { task: `a${i}` }))).id);
    await h.takeAssignment();
  }
  const refused = await failure(h.api.createSession(createRequest(p, { task: "one too many" })));
  expect(refused).toMatchObject({ code: status.RESOURCE_EXHAUSTED, kind: "limit_exceeded" });
  expect(refused.details).toMatch(/Too many concurrent active sessions/);
  expect((await h.api.listSessions({ projectId: p, page: 1, pageSize: 10 })).total).toBe(3);

  // Another project is not affected.
  await h.api.createSession(createRequest(newProject(), { task: "elsewhere" }));
  await h.takeAssignment();

  await h.api.stopSession({ projectId: p, sessionId: active[0], strategy: "session" });
  const fourth = await h.api.createSession(createRequest(p, { task: "fits now" }));
  expect(fourth.status).toBe("created");
  await h.takeAssignment();
  for (const id of [...active.slice(1), fourth.id]) {
    await h.api.stopSession({ projectId: p, sessionId: id, strategy: "session" });
  }
});

test("concurrent creates never pass the limit", async () => {
  const p = newProject();
  const results = await Promise.allSettled(
    Array.from({ length: 6 }, (_, i) => h.api.createSession(createRequest(p, { task: `c${i}` }))),
  );
  expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(3);
  for (let i = 0; i < 3; i++) await h.takeAssignment();
  const list = await h.api.listSessions({ projectId: p, page: 1, pageSize: 10 });
  expect(list.total).toBe(3);
  for (const s of list.sessions) await h.api.stopSession({ projectId: p, sessionId: s.id, strategy: "session" });
});

describe("messages", () => {
  let p: string;
  let sessionId: string;
  let all: string[];

  beforeAll(async () => {
    p = newProject();
    const s = await h.api.createSession(createRequest(p, { task: "chatty task", keepAlive: true }));
    sessionId = s.id;
    const work = await h.takeAssignment();
    await h.reports.sandboxReady({ sessionId, browserId: "b" });
    for (let step = 1; step <= 4; step++) {
      await h.reports.stepRecorded({
        sessionId,
        taskId: work.taskId,
        step,
        summary: `step ${step}`,
        screenshotRef: `shots/${step}.png`,
        messages: [
          { role: "ai", type: "browser_action", data: `action ${step}`, summary: `Doing ${step}`, hidden: false },
          { role: "ai", type: "browser_action_result", data: `result ${step}`, hidden: true },
        ],
      });
    }
    const page = await h.api.listMessages({ projectId: p, sessionId, limit: 100, latest: false });
    all = page.messages.map((m) => m.id);
    expect(page.hasMore).toBe(false);
  });

  test("chronological: the task as the human message, then each step's messages in order", async () => {
    const { messages } = await h.api.listMessages({ projectId: p, sessionId, limit: 100, latest: false });
    expect(messages.map((m) => m.data)).toEqual([
      "chatty task",
      ...[1, 2, 3, 4].flatMap((n) => [`action ${n}`, `result ${n}`]),
    ]);
    expect(messages[0]).toMatchObject({ role: "human", type: "user_message", sessionId });
    expect(messages[1]).toMatchObject({ role: "ai", summary: "Doing 1", hidden: false, screenshotRef: "shots/1.png" });
    expect(messages[2]).toMatchObject({ hidden: true });
  });

  test("cursor pagination: after, before, both, with hasMore", async () => {
    const first = await h.api.listMessages({ projectId: p, sessionId, limit: 4, latest: false });
    expect(first.messages.map((m) => m.id)).toEqual(all.slice(0, 4));
    expect(first.hasMore).toBe(true);
    // latest: the newest instead, oldest first, hasMore saying older ones exist; a cursor takes precedence over it.
    const newest = await h.api.listMessages({ projectId: p, sessionId, limit: 4, latest: true });
    expect(newest.messages.map((m) => m.id)).toEqual(all.slice(5, 9));
    expect(newest.hasMore).toBe(true);
    const whole = await h.api.listMessages({ projectId: p, sessionId, limit: 100, latest: true });
    expect([whole.messages.map((m) => m.id), whole.hasMore]).toEqual([all, false]);
    const afterWins = await h.api.listMessages({ projectId: p, sessionId, limit: 4, after: all[0], latest: true });
    expect(afterWins.messages.map((m) => m.id)).toEqual(all.slice(1, 5));
    const next = await h.api.listMessages({ projectId: p, sessionId, limit: 4, after: all[3], latest: false });
    expect(next.messages.map((m) => m.id)).toEqual(all.slice(4, 8));
    expect(next.hasMore).toBe(true);
    const end = await h.api.listMessages({ projectId: p, sessionId, limit: 4, after: all[7], latest: false });
    expect(end.messages.map((m) => m.id)).toEqual([all[8]]);
    expect(end.hasMore).toBe(false);

    const before = await h.api.listMessages({ projectId: p, sessionId, limit: 3, before: all[5], latest: false });
    expect(before.messages.map((m) => m.id)).toEqual(all.slice(2, 5));
    expect(before.hasMore).toBe(true);
    const start = await h.api.listMessages({ projectId: p, sessionId, limit: 3, before: all[2], latest: false });
    expect(start.messages.map((m) => m.id)).toEqual(all.slice(0, 2));
    expect(start.hasMore).toBe(false);

    const between = await h.api.listMessages({
      projectId: p,
      sessionId,
      limit: 2,
      after: all[1],
      before: all[6],
      latest: false,
    });
    expect(between.messages.map((m) => m.id)).toEqual(all.slice(2, 4));
    expect(between.hasMore).toBe(true);
  });

  test("a cursor from another session, or a limit out of range, is INVALID_ARGUMENT naming the field", async () => {
    const other = await failure(
      h.api.listMessages({
        projectId: p,
        sessionId,
        limit: 5,
        before: "00000000-0000-4000-8000-000000000000",
        latest: false,
      }),
    );
    expect(other).toMatchObject({ code: status.INVALID_ARGUMENT, field: ["query", "before"] });
    const limit = await failure(h.api.listMessages({ projectId: p, sessionId, limit: 101, latest: false }));
    expect(limit).toMatchObject({ code: status.INVALID_ARGUMENT, field: ["query", "limit"] });
  });
});
