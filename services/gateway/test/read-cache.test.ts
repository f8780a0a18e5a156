import { type Stack, startStack } from "./harness";
import { dispatchedTaskId, type RunnerReports, runnerReports } from "./runner-driver";

const FINAL_COSTS_WAIT_MS = 3_000;
let stack: Stack;
let runner: RunnerReports;

beforeAll(async () => {
  // A cache lifetime far beyond the test: whatever fresh state the reads show came through a change notice.
  // No billing runs here: an ended run with tokens waits FINAL_COSTS_WAIT_MS for costs that never come.
  stack = await startStack({
    env: { SESSION_CACHE_TTL_MS: String(60 * 60 * 1000) },
    sessionsEnv: { FINAL_COSTS_WAIT_MS: String(FINAL_COSTS_WAIT_MS) },
  });
  runner = runnerReports(stack);
});
afterAll(async () => {
  runner.close();
  await stack.close();
});

async function readUntil(id: string, done: (body: any) => boolean, path = `/api/v3/sessions/${id}`): Promise<any> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const reply = await stack.request("GET", path);
    if (done(reply.body) || Date.now() > deadline) return reply.body;
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("a polled session shows what the runner reported, although the gateway serves polls from its cache", async () => {
  const created = await stack.request("POST", "/api/v3/sessions", {
    body: { task: "read the price", keepAlive: true },
  });
  const id = created.body.id;
  const taskId = await dispatchedTaskId(stack, id);
  expect((await stack.request("GET", `/api/v3/sessions/${id}`)).body.status).toBe("created"); // now cached

  await runner.sandboxReady({ sessionId: id, browserId: "b-1" });
  await runner.taskStarted({ sessionId: id, taskId, title: "Reading the price", attempt: 1 });
  const running = await readUntil(id, (s) => s.status === "running");
  expect(running).toMatchObject({ status: "running", title: "Reading the price" });

  await runner.stepRecorded({ sessionId: id, taskId, step: 1, summary: "Opening the shop", messages: [] });
  await runner.taskCompleted({ sessionId: id, taskId, output: "42.00", success: true });
  const finished = await readUntil(id, (s) => s.status === "idle");
  expect(finished).toMatchObject({ status: "idle", output: "42.00", isTaskSuccessful: true, stepCount: 1 });
});

test("a stop through this gateway is visible on the very next read", async () => {
  const created = await stack.request("POST", "/api/v3/sessions", { body: { task: "anything" } });
  const id = created.body.id;
  await stack.request("GET", `/api/v3/sessions/${id}`);
  await stack.request("POST", `/api/v3/sessions/${id}/stop`, { body: { strategy: "session" } });
  expect((await stack.request("GET", `/api/v3/sessions/${id}`)).body.status).toBe("stopped");
});

test("a cached session is never served to another project", async () => {
  const plainKey = await stack.newProjectKey();
  const created = await stack.request("POST", "/api/v3/sessions", { body: { task: "anything" } });
  expect((await stack.request("GET", `/api/v3/sessions/${created.body.id}`)).status).toBe(200); // cached
  const other = await stack.request("GET", `/api/v3/sessions/${created.body.id}`, { key: plainKey });
  expect(other.status).toBe(404);
  expect(other.body).toEqual({ detail: "Session not found" });
});

describe("run status polls", () => {
  const statusPath = (runId: string) => `/api/v4/runs/${runId}/status`;
  const poll = async (runId: string) => (await stack.request("GET", statusPath(runId))).body.status;
  const pollUntil = async (runId: string, status: string) =>
    (await readUntil(runId, (body) => body.status === status, statusPath(runId))).status;

  async function startedRun() {
    const run = (await stack.request("POST", "/api/v4/runs", { body: { task: "read the price" } })).body;
    expect(await poll(run.id)).toBe("queued"); // now cached
    await runner.sandboxReady({ sessionId: run.sessionId, browserId: `b-${run.id}` });
    await runner.taskStarted({ sessionId: run.sessionId, taskId: run.id, title: "Reading", attempt: 1 });
    expect(await pollUntil(run.id, "running")).toBe("running");
    return run as { id: string; sessionId: string };
  }

  test("follow the run through every change, although the gateway serves them from its cache", async () => {
    const run = await startedRun();
    await runner.taskCompleted({ sessionId: run.sessionId, taskId: run.id, output: "42.00", success: true });
    expect(await pollUntil(run.id, "completed")).toBe("completed");
  });

  test("a cancel through this gateway is visible on the very next poll", async () => {
    const run = await startedRun();
    expect((await stack.request("POST", `/api/v4/runs/${run.id}/cancel`)).status).toBe(200);
    expect(await poll(run.id)).toBe("cancelled");
  });

  test("an ended run waiting for its costs is not kept: its end shows once the wait is over, with no notice", async () => {
    const run = await startedRun();
    await runner.usageReported({
      sessionId: run.sessionId,
      taskId: run.id,
      inputTokens: 1000,
      outputTokens: 10,
      usageId: `${run.id}-1`,
      attempt: 1,
      call: 1,
    });
    // Before the report: the run's end is stamped when sessions handles it, which a slow machine delays (the wait
    // measured from after the call came out 176 ms short once).
    const endedAt = Date.now();
    await runner.taskCompleted({ sessionId: run.sessionId, taskId: run.id, output: "done", success: true });
    // Nothing charges the tokens, so the run shows "running" until FINAL_COSTS_WAIT_MS has passed, then "completed".
    await new Promise((r) => setTimeout(r, 300));
    expect(await poll(run.id)).toBe("running");
    expect(await pollUntil(run.id, "completed")).toBe("completed");
    expect(Date.now() - endedAt).toBeGreaterThanOrEqual(FINAL_COSTS_WAIT_MS - 100);
  });

  test("a cached status is never served to another project", async () => {
    const otherKey = await stack.newProjectKey();
    const run = (await stack.request("POST", "/api/v4/runs", { body: { task: "anything" } })).body;
    expect(await poll(run.id)).toBe("queued"); // cached
    const other = await stack.request("GET", statusPath(run.id), { key: otherKey });
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ detail: "Run not found" });
  });
});
