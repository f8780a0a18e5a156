import { billing as billingProto, browserPool } from "@bas/proto";
import { connectClient } from "@bas/service-kit";
import { eventually } from "@bas/testing";
import { COUNTER_TEXTS } from "../../../test/fixtures/sites";
import { promptText, toolCallReply } from "../../../test/support/scripted-llm";
import { NEW_BROWSER_NOTE } from "../src/domain/resume-plan";
import { press, pressUnlessDone } from "./support/press-script";
import { type RunnerProcess, spawnRunner } from "./support/runner-process";
import { PROJECT, type RunnerStack, startRunnerStack } from "./support/runner-stack";

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

test("a runner killed while the model thinks: the next attempt continues from the last step, in the same browser, with its history; tokens match the bill", async () => {
  const stack = await startRunnerStack({
    noRunner: true,
    billing: true,
    runnerEnv: { MAX_ATTEMPTS: "2", TASK_ACK_WAIT_MS: "2000" },
  });
  try {
    const { llm, sites } = stack;
    llm.script("gemini-2.5-flash", [
      toolCallReply(
        "go_to_url",
        { url: `${sites.url}/counter/resume/` },
        { usage: { promptTokens: 1000, completionTokens: 50 } },
      ),
      press({ promptTokens: 1100, completionTokens: 60 }),
      // The first runner dies while waiting for this answer: the call is never answered, so never billed.
      toolCallReply("wait", { seconds: 0 }, { delayMs: 60_000 }),
      pressUnlessDone({ promptTokens: 1300, completionTokens: 70 }),
    ]);
    child = await spawnRunner(stack.runnerEnv);
    const created = await stack.create({ task: "Press the button once.", model: "gemini-2.5-flash" });
    await stack.waitFor(created.id, (s) => s.status === "running" && s.stepCount === 2);
    await waitUntil(() => llm.requests("gemini-2.5-flash").length === 3);
    await child.kill("SIGKILL");

    await stack.startRunner();
    const session = await stack.waitFor(created.id, (s) => s.status === "stopped");
    expect(session).toMatchObject({ isTaskSuccessful: true, output: "Pressed the button once.", stepCount: 3 });
    expect(sites.presses("resume")).toBe(1);
    // Attempt 2 was shown the steps of attempt 1 and the page as they left it.
    const resumed = promptText(llm.requests("gemini-2.5-flash")[3]);
    expect(resumed).toContain('Step 2:\n  Action: click {"index":1}\n  Result: Clicked element 1.');
    expect(resumed).toContain(COUNTER_TEXTS.count(1));
    expect(resumed).toContain("Step 3 of at most");
    const events = await sessionEvents(stack, created.id);
    expect(events.filter((e) => e.type === "TaskStarted").map((e) => e.data.attempt)).toEqual([1, 2]);
    expect(events.filter((e) => e.type === "StepRecorded").map((e) => [e.data.step, e.data.attempt])).toEqual([
      [1, 1],
      [2, 1],
      [3, 2],
    ]);
    const messages = await stack.messages(created.id);
    expect(messages.filter((m) => m.type === "browser_action").map((m) => JSON.parse(m.data).action)).toEqual([
      "go_to_url",
      "click",
      "done",
    ]);
    expect(messages.find((m) => m.type === "task_resumed")).toMatchObject({ hidden: true });

    // Every answered call counted once, on the session and on the bill alike.
    expect(session).toMatchObject({ totalInputTokens: 3400, totalOutputTokens: 180 });
    const billing = connectClient(billingProto.BillingClient, stack.runnerEnv.BILLING_ADDR);
    try {
      const billed = await eventually(
        () => billing.getTotals({ projectId: PROJECT, sessionId: created.id }),
        (t) => t.inputTokens >= 3400,
      );
      expect(billed).toMatchObject({ inputTokens: 3400, outputTokens: 180 });
      const charged = await stack.waitFor(created.id, (s) => s.llmCostUsd === billed.llmCostUsd);
      expect(charged).toMatchObject({ totalInputTokens: 3400, totalOutputTokens: 180 });
    } finally {
      billing.close();
    }
  } finally {
    await stack.close();
  }
});

test("a runner killed in the middle of an action, its browser gone too: the next attempt records that step as interrupted, says it goes on in a new browser, and never does it again", async () => {
  const stack = await startRunnerStack({ noRunner: true, runnerEnv: { MAX_ATTEMPTS: "2", TASK_ACK_WAIT_MS: "2000" } });
  const pool = connectClient(browserPool.BrowserPoolClient, stack.runnerEnv.BROWSER_POOL_ADDR);
  try {
    const { llm, sites } = stack;
    const usage = { promptTokens: 500, completionTokens: 20 };
    llm.script("gemini-2.0-flash-lite", [
      toolCallReply("go_to_url", { url: `${sites.url}/counter/midaction/?hold=1` }, { usage }),
      // The press is counted, and its answer held: the runner is still acting when it dies.
      press(usage),
      pressUnlessDone(usage),
    ]);
    child = await spawnRunner(stack.runnerEnv);
    const created = await stack.create({ task: "Press the button once.", model: "gemini-2.0-flash-lite" });
    await waitUntil(() => sites.presses("midaction") === 1);
    await child.kill("SIGKILL");
    const browsers = await pool.listBrowsers({ projectId: PROJECT, pageNumber: 1, pageSize: 100 });
    const browser = browsers.items.find((b) => b.agentSessionId === created.id && b.status === "active");
    await pool.stopBrowser({ projectId: PROJECT, browserId: browser!.id });
    sites.releaseHeld();

    await stack.startRunner();
    const session = await stack.waitFor(created.id, (s) => s.status === "stopped");
    expect(session).toMatchObject({ isTaskSuccessful: true, output: "Pressed the button once.", stepCount: 3 });
    expect(sites.presses("midaction")).toBe(1);
    expect(llm.requests("gemini-2.0-flash-lite")).toHaveLength(3);
    expect(promptText(llm.requests("gemini-2.0-flash-lite")[2])).toContain(NEW_BROWSER_NOTE);
    const messages = await stack.messages(created.id);
    expect(messages.filter((m) => m.type === "browser_action_error").map((m) => m.data)).toEqual([
      expect.stringMatching(/may or may not have taken effect/),
    ]);
    expect(messages.filter((m) => m.type === "task_resumed")).toEqual([
      expect.objectContaining({ hidden: false, summary: "Continuing in a new browser" }),
    ]);
    expect(session).toMatchObject({ totalInputTokens: 1500, totalOutputTokens: 60 });
  } finally {
    pool.close();
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
  const stack = await startRunnerStack({
    noRunner: true,
    runnerEnv: { MAX_ATTEMPTS: "3", TASK_ACK_WAIT_MS: "120000" },
  });
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
    // Without the hand-back, the task would wait 120 s of ack wait for a redelivery; it is given 45.
    await first.close();
    await stack.startRunner();
    const session = await stack.waitFor(created.id, (s) => s.status === "stopped", 45_000);
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
