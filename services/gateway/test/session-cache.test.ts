import { type Stack, startStack } from "./harness";
import { dispatchedTaskId, type RunnerReports, runnerReports } from "./runner-driver";

let stack: Stack;
let runner: RunnerReports;

beforeAll(async () => {
  // A cache lifetime far beyond the test: whatever fresh state the reads show came through a change notice.
  stack = await startStack({ env: { SESSION_CACHE_TTL_MS: String(60 * 60 * 1000) } });
  runner = runnerReports(stack);
});
afterAll(async () => {
  runner.close();
  await stack.close();
});

async function readUntil(id: string, done: (body: any) => boolean): Promise<any> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const reply = await stack.request("GET", `/api/v3/sessions/${id}`);
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
