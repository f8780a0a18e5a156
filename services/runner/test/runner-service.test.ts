import { browserPool } from "@bas/proto";
import { connectClient } from "@bas/service-kit";
import { scrapeMetrics, sumOf } from "@bas/testing";
import { indexOf, httpError, promptText, toolCallReply, toolCallsReply } from "../../../test/support/scripted-llm";
import { type RunnerStack, startRunnerStack } from "./support/runner-stack";

let stack: RunnerStack;
beforeAll(async () => {
  stack = await startRunnerStack();
});
afterAll(() => stack?.close());

test("a dispatched task is worked to completion: output, success, steps, messages and tokens on the session", async () => {
  const { llm, sites } = stack;
  // The scripted model is chosen by the provider model name: each test uses its own model value.
  llm.script("gpt-4o", [
    toolCallReply("go_to_url", { url: `${sites.url}/shop/` }, { usage: { promptTokens: 1000, completionTokens: 50 } }),
    (req) =>
      toolCallsReply(
        [
          { name: "input_text", arguments: { index: indexOf(req, /<input type=search/), text: "Aurora" } },
          { name: "send_keys", arguments: { keys: "Enter" } },
        ],
        { usage: { promptTokens: 1200, completionTokens: 60 } },
      ),
    (req) =>
      toolCallReply(
        "click",
        { index: indexOf(req, />Aurora 16 Pro Laptop</) },
        { usage: { promptTokens: 1300, completionTokens: 20 } },
      ),
    (req) =>
      toolCallReply(
        "done",
        // The product page shows its price on the line after the product's heading.
        {
          success: true,
          text: `Aurora 16 Pro Laptop: ${/Aurora 16 Pro Laptop\n(\$[\d.]+)/.exec(promptText(req))?.[1]}`,
        },
        { usage: { promptTokens: 1400, completionTokens: 30 } },
      ),
  ]);
  const created = await stack.create({ task: "What does the Aurora 16 Pro Laptop cost?", model: "gpt-4o" });
  const session = await stack.waitFor(created.id, (s) => s.status === "stopped");
  expect(session).toMatchObject({
    status: "stopped",
    isTaskSuccessful: true,
    output: "Aurora 16 Pro Laptop: $1899.00",
    stepCount: 4,
    lastStepSummary: "Task completed",
    title: "What does the Aurora 16 Pro Laptop cost?",
    totalInputTokens: 4900,
    totalOutputTokens: 160,
  });
  const messages = await stack.messages(created.id);
  expect(messages.map((m) => m.type)).toEqual([
    "user_message",
    "browser_action",
    "browser_action_result",
    "browser_action",
    "browser_action_result",
    "browser_action",
    "browser_action_result",
    "browser_action",
    "browser_action_result",
    "browser_action",
    "completion",
  ]);
  expect(messages.find((m) => m.type === "browser_action" && m.summary?.startsWith("Clicking"))?.summary).toBe(
    "Clicking 'Aurora 16 Pro Laptop'",
  );
});

test("keepAlive: the session goes idle after its task, and a second task in the same browser sees the first one's cart", async () => {
  const { llm, sites } = stack;
  llm.script("gpt-4o-mini", [
    toolCallReply("go_to_url", { url: `${sites.url}/shop/product/orbit-headphones` }),
    (req) => toolCallReply("click", { index: indexOf(req, /<button>Add to cart</) }),
    toolCallReply("done", { success: true, text: "Added the headphones to the cart." }),
    // Second task: a new attempt at the page, same browser.
    toolCallReply("go_to_url", { url: `${sites.url}/shop/cart` }),
    (req) =>
      toolCallReply("done", {
        success: true,
        text:
          promptText(req).includes("Orbit Wireless Headphones") && promptText(req).includes("Total: $199.95")
            ? "The cart holds the Orbit Wireless Headphones."
            : "The cart is empty.",
      }),
  ]);
  const first = await stack.create({
    task: "Put the Orbit headphones in the cart.",
    model: "gpt-4o-mini",
    keepAlive: true,
  });
  const idle = await stack.waitFor(first.id, (s) => s.status === "idle" && s.isTaskSuccessful !== undefined);
  expect(idle).toMatchObject({ isTaskSuccessful: true, output: "Added the headphones to the cart.", stepCount: 3 });

  await stack.create({ task: "What is in the cart?", model: "gpt-4o-mini", sessionId: first.id });
  const second = await stack.waitFor(
    first.id,
    (s) => s.status === "idle" && s.output === "The cart holds the Orbit Wireless Headphones.",
  );
  expect(second).toMatchObject({ isTaskSuccessful: true, title: "What is in the cart?" });
});

test("a session created without a task gets its sandbox (idle), then runs a task dispatched to it", async () => {
  const { llm } = stack;
  llm.script("gpt-4.1-mini", [toolCallReply("done", { success: true, text: "nothing to do" })]);
  const created = await stack.create({ model: "gpt-4.1-mini", keepAlive: true });
  // The sandbox may be ready before the reply is read (the read model already shows it idle): both are true answers.
  expect(["created", "idle"]).toContain(created.status);
  await stack.waitFor(created.id, (s) => s.status === "idle");
  await stack.create({ task: "Say done.", model: "gpt-4.1-mini", sessionId: created.id });
  const done = await stack.waitFor(created.id, (s) => s.status === "idle" && s.output === "nothing to do");
  expect(done).toMatchObject({ isTaskSuccessful: true, stepCount: 1 });
});

test("stop with strategy task: the loop ends within the step and the session is idle", async () => {
  const { llm, sites } = stack;
  llm.script("claude-sonnet-4", [
    toolCallReply("go_to_url", { url: `${sites.url}/shop/` }),
    toolCallReply("wait", { seconds: 1 }, { delayMs: 20_000 }),
    toolCallReply("done", { success: true, text: "never" }),
  ]);
  const created = await stack.create({ task: "Browse slowly.", model: "claude-sonnet-4", keepAlive: true });
  await stack.waitFor(created.id, (s) => s.status === "running" && s.stepCount === 1);
  // The model is now thinking about step 2.
  await stack.api.stopSession({ projectId: "project-runner-test", sessionId: created.id, strategy: "task" });
  const idle = await stack.waitFor(created.id, (s) => s.status === "idle");
  expect(idle).toMatchObject({ isTaskSuccessful: false, stepCount: 1, lastStepSummary: "Task stopped by the user" });
  await waitUntil(() => stack.runner.status().activeTasks === 0);
  // The stop came while the model was asked for step 2 (or just before): nothing after it ran.
  expect(llm.requests("claude-sonnet-4").length).toBeLessThanOrEqual(2);
  expect(llm.remaining("claude-sonnet-4")).toBeGreaterThanOrEqual(1);
  expect((await stack.waitFor(created.id, () => true)).stepCount).toBe(1);
});

test("stop with strategy session: the session is stopped and its browser is gone", async () => {
  const { llm, sites } = stack;
  llm.script("claude-3-5-haiku", [
    toolCallReply("go_to_url", { url: `${sites.url}/shop/` }),
    toolCallReply("wait", { seconds: 1 }, { delayMs: 20_000 }),
  ]);
  const created = await stack.create({ task: "Browse slowly.", model: "claude-3-5-haiku", keepAlive: true });
  await stack.waitFor(created.id, (s) => s.status === "running" && s.stepCount === 1);
  await stack.api.stopSession({ projectId: "project-runner-test", sessionId: created.id, strategy: "session" });
  await stack.waitFor(created.id, (s) => s.status === "stopped");
  await waitUntil(() => stack.runner.status().activeTasks === 0);
  const pool = connectClient(browserPool.BrowserPoolClient, `127.0.0.1:${stack.browserPool.grpcPort}`);
  try {
    await waitUntil(async () => {
      const list = await pool.listBrowsers({ projectId: "project-runner-test", pageNumber: 1, pageSize: 100 });
      const mine = list.items.filter((b) => b.agentSessionId === created.id);
      return mine.length === 1 && mine[0].status === "stopped";
    });
  } finally {
    pool.close();
  }
});

test("a model endpoint that keeps failing fails the task with a clear error; the session does not stay running", async () => {
  const { llm } = stack;
  llm.script("mistral-large", [httpError(500), httpError(502), httpError(503)]);
  const created = await stack.create({ task: "Anything.", model: "mistral-large", useOwnKey: false });
  const session = await stack.waitFor(created.id, (s) => s.status !== "running" && s.status !== "created");
  expect(session).toMatchObject({
    status: "stopped",
    isTaskSuccessful: false,
    lastStepSummary: expect.stringMatching(/^Task failed: The model call failed: the model endpoint answered 503/),
  });
  expect(llm.requests("mistral-large")).toHaveLength(3);
});

test("/metrics: tasks running and queued, steps, model latency and tokens by model, the work queue's lag", async () => {
  const { llm, sites } = stack;
  const model = "gemini-2.0-flash";
  const usage = { promptTokens: 700, completionTokens: 40 };
  // Three tasks for a runner that works two at a time; each step is a scroll (a second's thought) or done, so the
  // three tasks take six calls whatever order they come in.
  const scroll = toolCallReply("scroll", { direction: "down" }, { usage, delayMs: 1_000 });
  const done = toolCallReply("done", { success: true, text: "scrolled" }, { usage });
  llm.script(model, [scroll, scroll, scroll, done, done, done]);
  const scrape = () => scrapeMetrics(stack.runner.metricsPort);
  const steps = async () => sumOf(await scrape(), "bas_runner_step_duration_seconds_count", { service: "runner" });
  const stepsBefore = await steps();
  expect(stepsBefore).toBeDefined();

  const created = [];
  for (let i = 0; i < 3; i++) created.push(await stack.create({ task: `Look at ${sites.url}/shop/`, model }));
  await waitUntil(async () => {
    const now = await scrape();
    return sumOf(now, "bas_runner_tasks_running") === 2 && sumOf(now, "bas_runner_tasks_queued") === 1;
  });
  for (const { id } of created) await stack.waitFor(id, (s) => s.status === "stopped");
  await waitUntil(async () => sumOf(await scrape(), "bas_runner_tasks_running") === 0);

  const samples = await scrape();
  const byModel = { service: "runner", model };
  expect(sumOf(samples, "bas_runner_model_call_duration_seconds_count", { ...byModel, outcome: "ok" })).toBe(6);
  expect(sumOf(samples, "bas_runner_model_call_duration_seconds_sum", byModel)).toBeGreaterThan(3);
  expect(sumOf(samples, "bas_runner_model_tokens_total", { ...byModel, direction: "input" })).toBe(6 * 700);
  expect(sumOf(samples, "bas_runner_model_tokens_total", { ...byModel, direction: "output" })).toBe(6 * 40);
  expect(await steps()).toBe(stepsBefore! + 6);
  expect(sumOf(samples, "bas_runner_tasks_queued")).toBe(0);
  expect(sumOf(samples, "bas_jetstream_consumer_lag_messages", { consumer: "runners", state: "pending" })).toBe(0);
});

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
