import type { MsgRequest } from "@nats-io/jetstream";
import { eventually } from "@bas/testing";
import { type Stack, startStack } from "./harness";
import { type RunnerReports, runnerReports } from "./runner-driver";

/** A v4 conversation outlives its browser: after the inactivity timeout, a follow-up or a message reopens it. */
let stack: Stack;
let runner: RunnerReports;
// The sessions service's clock stands still unless the test moves it: a session times out when the test says so,
// never because the machine was slow.
let offset = 0;
const start = Date.now();
const now = () => new Date(start + offset);

beforeAll(async () => {
  stack = await startStack({
    sessionsEnv: { SESSION_INACTIVITY_TIMEOUT_MS: "200", MAX_ACTIVE_SESSIONS_PER_PROJECT: "2" },
    sessionsDeps: { now },
  });
  runner = runnerReports(stack);
});
afterAll(async () => {
  runner.close();
  await stack.close();
});

/** The type of the session's last event, read from the event stream. */
async function lastEventType(sessionId: string) {
  const { jsm, streams } = stack.infra;
  const m = await jsm.streams.getMessage(streams.events.stream, {
    last_by_subj: streams.events.subject("session", sessionId),
  } as MsgRequest);
  return m?.json<{ type: string }>().type;
}

/** The assignment the sessions service put on the work queue for a task, as a runner takes it. */
async function assignmentOf(taskId: string) {
  const { jsm, streams } = stack.infra;
  return eventually(
    async () => {
      for (let seq = 1; ; ) {
        const m = await jsm.streams
          .getMessage(streams.work.stream, { seq, next_by_subj: streams.work.subject("tasks") } as MsgRequest)
          .catch(() => null);
        if (!m) return undefined;
        const a = m.json<{ taskId: string; reopened?: boolean }>();
        if (a.taskId === taskId) return a;
        seq = m.seq + 1;
      }
    },
    (a) => a !== undefined,
  );
}

/** A conversation whose run completed and which then timed out (the clock moves past the timeout). */
async function finishedConversation(key?: string) {
  const run = (await stack.request("POST", "/api/v4/runs", { key, body: { task: "first" } })).body;
  await runner.sandboxReady({ sessionId: run.sessionId, browserId: `b-${run.id}` });
  await runner.taskStarted({ sessionId: run.sessionId, taskId: run.id, title: "First", attempt: 1 });
  await runner.taskCompleted({ sessionId: run.sessionId, taskId: run.id, output: "done", success: true });
  offset += 1_000; // idle for a second: past the timeout
  await eventually(
    () => lastEventType(run.sessionId),
    (type) => type === "SessionTimedOut",
  );
  return run as { id: string; sessionId: string };
}

test("a follow-up run after the timeout reopens the conversation: it waits for a new browser, then runs", async () => {
  const first = await finishedConversation();
  const reply = await stack.request("POST", "/api/v4/runs", { body: { task: "again", sessionId: first.sessionId } });
  expect(reply.status).toBe(200);
  expect(reply.body).toMatchObject({ sessionId: first.sessionId, status: "queued" });
  // The runner is told the browser is a new one (browser-pool then gives it one despite the session's end).
  expect(await assignmentOf(reply.body.id)).toMatchObject({ reopened: true });
  await runner.sandboxReady({ sessionId: first.sessionId, browserId: "b-new" });
  expect((await stack.request("GET", `/api/v4/runs/${reply.body.id}/status`)).body).toEqual({ status: "dispatching" });
  await runner.taskStarted({ sessionId: first.sessionId, taskId: reply.body.id, title: "Again", attempt: 1 });
  await runner.taskCompleted({
    sessionId: first.sessionId,
    taskId: reply.body.id,
    output: "again done",
    success: true,
  });
  expect((await stack.request("GET", `/api/v4/runs/${reply.body.id}`)).body).toMatchObject({
    status: "completed",
    result: "again done",
  });
});

test("a queued message after the timeout reopens it too, and runs at once", async () => {
  const first = await finishedConversation();
  const sent = await stack.request("POST", `/api/v4/sessions/${first.sessionId}/queue`, { body: { text: "hello?" } });
  expect(sent.status).toBe(200);
  expect(sent.body).toMatchObject({ status: "dispatching" });
  expect(await assignmentOf(sent.body.runId)).toMatchObject({ reopened: true });
  expect((await stack.request("GET", `/api/v4/runs/${sent.body.runId}/status`)).body).toEqual({ status: "queued" });
});

test("reopening counts against the project's limit of active sessions, also when two reopen at once", async () => {
  const key = await stack.newProjectKey();
  const timedOut = [await finishedConversation(key), await finishedConversation(key)];
  // One conversation busy: one place left under the limit of 2.
  expect((await stack.request("POST", "/api/v4/runs", { key, body: { task: "busy" } })).status).toBe(200);

  // Two follow-ups at once would each reopen one: the first takes the place, the second is refused like a create.
  const replies = await Promise.all(
    timedOut.map((c) =>
      stack.request("POST", "/api/v4/runs", { key, body: { task: "again", sessionId: c.sessionId } }),
    ),
  );
  expect(replies.map((r) => r.status).sort()).toEqual([200, 429]);
  const refused = replies.find((r) => r.status === 429)!;
  expect(refused.body.detail).toContain("Too many concurrent active sessions");
  const stillEnded = timedOut[replies.indexOf(refused)];
  expect(await lastEventType(stillEnded.sessionId)).toBe("SessionTimedOut");

  // A message would reopen it too: refused the same way, and nothing is queued.
  const sent = await stack.request("POST", `/api/v4/sessions/${stillEnded.sessionId}/queue`, {
    key,
    body: { text: "hello?" },
  });
  expect(sent.status).toBe(429);
  expect(await lastEventType(stillEnded.sessionId)).toBe("SessionTimedOut");
});
