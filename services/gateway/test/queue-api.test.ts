import { type Stack, startStack } from "./harness";
import { type RunnerReports, runnerReports } from "./runner-driver";

/** The v4 session queue through the REST API, with the runner's reports played by the test. */
let stack: Stack;
let runner: RunnerReports;

beforeAll(async () => {
  stack = await startStack({ sessionsEnv: { MAX_ACTIVE_SESSIONS_PER_PROJECT: "30" } });
  runner = runnerReports(stack);
});
afterAll(async () => {
  runner.close();
  await stack.close();
});

interface Message {
  id: number;
  sessionId: string;
  runId: string | null;
  mode: string;
  status: string;
  text: string;
  createdAt: string;
}

/** A conversation whose first run has started: a busy session. */
async function busySession() {
  const run = (await stack.request("POST", "/api/v4/runs", { body: { task: "first" } })).body;
  await runner.sandboxReady({ sessionId: run.sessionId, browserId: `b-${run.id}` });
  await runner.taskStarted({ sessionId: run.sessionId, taskId: run.id, title: "First", attempt: 1 });
  return { sessionId: run.sessionId as string, runId: run.id as string };
}

async function send(sessionId: string, body: object, headers: Record<string, string> = {}): Promise<Message> {
  const reply = await stack.request("POST", `/api/v4/sessions/${sessionId}/queue`, { body, headers });
  expect(reply.status).toBe(200);
  return reply.body;
}

const pending = async (sessionId: string) =>
  ((await stack.request("GET", `/api/v4/sessions/${sessionId}/queue`)).body.queue as Message[]).map((m) => m.text);
const message = async (sessionId: string, id: number) =>
  (await stack.request("GET", `/api/v4/sessions/${sessionId}/queue/${id}`)).body as Message;
const runOf = async (id: string) => (await stack.request("GET", `/api/v4/runs/${id}`)).body;
const finish = (sessionId: string, taskId: string) =>
  runner.taskCompleted({ sessionId, taskId, output: `done: ${taskId}`, success: true });

test("messages on a busy session wait and run one per ended run, in order; on an idle one a message runs at once", async () => {
  const { sessionId, runId } = await busySession();
  const a = await send(sessionId, { text: "then a" });
  const b = await send(sessionId, { text: "then b" });
  expect(Object.keys(a)).toEqual([
    "id",
    "sessionId",
    "runId",
    "mode",
    "status",
    "text",
    "attachedFileIds",
    "createdAt",
  ]);
  expect([a, b].map((m) => [m.id, m.status, m.runId, m.mode])).toEqual([
    [1, "pending", null, "queue"],
    [2, "pending", null, "queue"],
  ]);
  expect(await pending(sessionId)).toEqual(["then a", "then b"]);

  await finish(sessionId, runId);
  const dispatched = await message(sessionId, a.id);
  expect(dispatched.status).toBe("dispatching");
  expect(await runOf(dispatched.runId!)).toMatchObject({ task: "then a", sessionId, status: "dispatching" });
  expect(await pending(sessionId)).toEqual(["then b"]);
  await runner.taskStarted({ sessionId, taskId: dispatched.runId!, title: "A", attempt: 1 });
  expect((await message(sessionId, a.id)).status).toBe("consumed");

  await finish(sessionId, dispatched.runId!);
  const runB = (await message(sessionId, b.id)).runId!;
  expect(await runOf(runB)).toMatchObject({ task: "then b" });
  await runner.taskStarted({ sessionId, taskId: runB, title: "B", attempt: 1 });
  await finish(sessionId, runB);
  expect(await pending(sessionId)).toEqual([]);

  // Idle now: the next message is a run straight away, and every run is one of this conversation.
  const c = await send(sessionId, { text: "right now" });
  expect(c.status).toBe("dispatching");
  expect(await runOf(c.runId!)).toMatchObject({ task: "right now", status: "dispatching" });
  const runs = (await stack.request("GET", `/api/v4/runs?sessionId=${sessionId}`)).body.runs;
  expect(runs.map((r: { task: string }) => r.task)).toEqual(["right now", "then b", "then a", "first"]);
});

test("interrupt cancels the active run and runs straight after it, ahead of what waits; on an idle session it just runs", async () => {
  const { sessionId, runId } = await busySession();
  await send(sessionId, { text: "waiting" });
  const urgent = await send(sessionId, { text: "stop, do this", interrupt: true });
  expect(urgent).toMatchObject({ mode: "interrupt", status: "dispatching" });
  expect(await runOf(runId)).toMatchObject({ status: "cancelled" });
  expect(await runOf(urgent.runId!)).toMatchObject({ task: "stop, do this", status: "dispatching" });
  expect(await pending(sessionId)).toEqual(["waiting"]);
  // The interrupted run's runner is refused from now on.
  await expect(
    runner.stepRecorded({ sessionId, taskId: runId, step: 9, summary: "late", messages: [] }),
  ).rejects.toMatchObject({ code: 9 });

  await runner.taskStarted({ sessionId, taskId: urgent.runId!, title: "Urgent", attempt: 1 });
  await finish(sessionId, urgent.runId!);
  const waiting = (await message(sessionId, 1)).runId!;
  await runner.taskStarted({ sessionId, taskId: waiting, title: "W", attempt: 1 });
  await finish(sessionId, waiting);
  const calm = await send(sessionId, { text: "no rush", interrupt: true });
  expect(calm.status).toBe("dispatching");

  // Only the run the interrupt cut short has a cutoff, at the moment the interrupt was accepted.
  const queue = (await stack.request("GET", `/api/v4/sessions/${sessionId}/queue`)).body;
  expect(queue.steeringCutoffs).toEqual([{ sourceRunId: runId, createdAt: urgent.createdAt }]);
});

test("a pending message can be taken back; one that became a run is a 409 that says what it became", async () => {
  const { sessionId, runId } = await busySession();
  const m = await send(sessionId, { text: "never mind" });
  const path = `/api/v4/sessions/${sessionId}/queue/${m.id}`;
  const taken = await stack.request("DELETE", path);
  expect(taken).toMatchObject({ status: 200, body: { id: m.id, status: "cancelled", runId: null } });
  expect((await stack.request("DELETE", path)).status).toBe(200);
  expect(await pending(sessionId)).toEqual([]);
  await finish(sessionId, runId);
  expect((await stack.request("GET", `/api/v4/sessions/${sessionId}`)).body.latestRunId).toBe(runId);

  const ran = await send(sessionId, { text: "go" });
  const refused = await stack.request("DELETE", `/api/v4/sessions/${sessionId}/queue/${ran.id}`);
  expect(refused.status).toBe(409);
  expect(refused.body).toEqual({
    detail: `Message ${ran.id} is dispatching (run ${ran.runId}); only a pending message can be cancelled`,
  });
  expect((await stack.request("DELETE", `/api/v4/sessions/${sessionId}/queue/99`)).body).toEqual({
    detail: "Queued message not found",
  });
});

test("X-V4-Queue-Deduplicate: a retried send answers with the first message and queues nothing twice", async () => {
  const { sessionId } = await busySession();
  const headers = { "X-V4-Queue-Deduplicate": "send-1" };
  const first = await send(sessionId, { text: "once" }, headers);
  const again = await send(sessionId, { text: "once" }, headers);
  expect(again).toEqual(first);
  expect(await pending(sessionId)).toEqual(["once"]);
  const other = await send(sessionId, { text: "once" }, { "X-V4-Queue-Deduplicate": "send-2" });
  expect(other.id).toBe(first.id + 1);
});

test("another project's session, a v3 session and unknown ids are 404; no key is 401; bad input is an exact 422", async () => {
  const { sessionId } = await busySession();
  const key = await stack.newProjectKey();
  for (const [method, path] of [
    ["POST", `/api/v4/sessions/${sessionId}/queue`],
    ["GET", `/api/v4/sessions/${sessionId}/queue`],
    ["GET", `/api/v4/sessions/${sessionId}/queue/1`],
    ["DELETE", `/api/v4/sessions/${sessionId}/queue/1`],
  ]) {
    const reply = await stack.request(method, path, { key, body: method === "POST" ? { text: "x" } : undefined });
    expect([path, reply.status, reply.body]).toEqual([path, 404, { detail: "Session not found" }]);
  }
  expect(await pending(sessionId)).toEqual([]);
  const v3 = (await stack.request("POST", "/api/v3/sessions", { body: { task: "v3 only" } })).body;
  expect((await stack.request("POST", `/api/v4/sessions/${v3.id}/queue`, { body: { text: "x" } })).status).toBe(404);
  expect((await stack.request("GET", `/api/v4/sessions/${sessionId}/queue`, { key: null })).status).toBe(401);

  const post = (body: object) => stack.request("POST", `/api/v4/sessions/${sessionId}/queue`, { body });
  expect((await post({ text: "" })).body).toEqual({
    detail: [
      {
        loc: ["body", "text"],
        msg: "String should have at least 1 character",
        type: "string_too_short",
      },
    ],
  });
  expect((await post({ text: "x", priority: 1 })).body).toEqual({
    detail: [{ loc: ["body", "priority"], msg: "Extra inputs are not permitted", type: "extra_forbidden" }],
  });
  expect((await post({ text: "x", interrupt: "yes" })).body.detail[0]).toMatchObject({
    loc: ["body", "interrupt"],
    type: "bool_type",
  });
  const badId = await stack.request("GET", `/api/v4/sessions/${sessionId}/queue/abc`);
  expect(badId.status).toBe(422);
  expect(badId.body.detail[0]).toMatchObject({ loc: ["path", "messageId"], type: "int_parsing" });
});
