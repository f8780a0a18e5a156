import { toolCallReply } from "../../../test/support/scripted-llm";
import { type RunnerProcess, spawnRunner } from "./support/runner-process";
import { type RunnerStack, startRunnerStack } from "./support/runner-stack";

let child: RunnerProcess | undefined;
afterEach(async () => {
  await child?.kill();
  child = undefined;
});

async function sessionEvents(stack: RunnerStack, sessionId: string): Promise<Array<{ type: string; data: any }>> {
  const events: Array<{ type: string; data: any }> = [];
  const subject = stack.infra.streams.events.subject("session", sessionId);
  for (let seq = 1; ; ) {
    const m = await stack.infra.jsm.streams
      .getMessage(stack.infra.streams.events.stream, { seq, next_by_subj: subject } as any)
      .catch(() => null);
    if (!m) break;
    events.push(m.json());
    seq = m.seq + 1;
  }
  return events;
}

test("a runner killed in the middle of a task: another runner takes it up as attempt 2 and finishes it", async () => {
  const stack = await startRunnerStack({ noRunner: true, runnerEnv: { MAX_ATTEMPTS: "2", TASK_ACK_WAIT_MS: "2000" } });
  try {
    const { llm, sites } = stack;
    llm.script("gemini-2.5-flash", [
      toolCallReply("go_to_url", { url: `${sites.url}/shop/` }),
      // The first runner dies while waiting for this answer.
      toolCallReply("wait", { seconds: 0 }, { delayMs: 60_000 }),
      // The second attempt starts over.
      toolCallReply("go_to_url", { url: `${sites.url}/shop/cart` }),
      toolCallReply("done", { success: true, text: "Finished on the second attempt." }),
    ]);
    child = await spawnRunner(stack.runnerEnv);
    const created = await stack.create({ task: "Look at the shop.", model: "gemini-2.5-flash" });
    await stack.waitFor(created.id, (s) => s.status === "running" && s.stepCount === 1);
    // Kill it while it waits for the model's second answer (so the script's next step belongs to attempt 2).
    await waitUntil(() => llm.requests("gemini-2.5-flash").length === 2);
    await child.kill("SIGKILL");

    await stack.startRunner();
    const session = await stack.waitFor(created.id, (s) => s.status === "stopped");
    expect(session).toMatchObject({ isTaskSuccessful: true, output: "Finished on the second attempt." });
    const started = (await sessionEvents(stack, created.id)).filter((e) => e.type === "TaskStarted");
    expect(started.map((e) => e.data.attempt)).toEqual([1, 2]);
  } finally {
    await stack.close();
  }
});

test("a task whose runners keep dying fails clearly after the last attempt; the session does not stay running", async () => {
  const stack = await startRunnerStack({ noRunner: true, runnerEnv: { MAX_ATTEMPTS: "1", TASK_ACK_WAIT_MS: "2000" } });
  try {
    const { llm, sites } = stack;
    llm.script("gemini-2.0-flash", [
      toolCallReply("go_to_url", { url: `${sites.url}/shop/` }),
      toolCallReply("wait", { seconds: 0 }, { delayMs: 60_000 }),
    ]);
    child = await spawnRunner(stack.runnerEnv);
    const created = await stack.create({ task: "Look at the shop.", model: "gemini-2.0-flash" });
    await stack.waitFor(created.id, (s) => s.status === "running" && s.stepCount === 1);
    await waitUntil(() => llm.requests("gemini-2.0-flash").length === 2);
    await child.kill("SIGKILL");

    await stack.startRunner();
    const session = await stack.waitFor(created.id, (s) => s.status !== "running");
    expect(session).toMatchObject({
      status: "stopped",
      isTaskSuccessful: false,
      lastStepSummary:
        "Task failed: The task failed after 1 attempt: the runner working on it stopped or could not finish",
    });
    expect(llm.requests("gemini-2.0-flash")).toHaveLength(2);
  } finally {
    await stack.close();
  }
});

test("a runner shut down gracefully hands its task back, and another runner finishes it", async () => {
  const stack = await startRunnerStack({ noRunner: true, runnerEnv: { MAX_ATTEMPTS: "3", TASK_ACK_WAIT_MS: "20000" } });
  try {
    const { llm, sites } = stack;
    llm.script("llama-3.3-70b", [
      toolCallReply("go_to_url", { url: `${sites.url}/shop/` }),
      toolCallReply("wait", { seconds: 0 }, { delayMs: 60_000 }),
      toolCallReply("done", { success: true, text: "Handed over." }),
    ]);
    const first = await stack.startRunner();
    const created = await stack.create({ task: "Look at the shop.", model: "llama-3.3-70b" });
    await stack.waitFor(created.id, (s) => s.status === "running" && s.stepCount === 1);
    await waitUntil(() => llm.requests("llama-3.3-70b").length === 2);
    // Without the hand-back, the task would wait 20 s of ack wait for a redelivery.
    await first.close();
    await stack.startRunner();
    const session = await stack.waitFor(created.id, (s) => s.status === "stopped", 15_000);
    expect(session).toMatchObject({ isTaskSuccessful: true, output: "Handed over." });
  } finally {
    await stack.close();
  }
});

async function waitUntil(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
