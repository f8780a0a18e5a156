import { status } from "@grpc/grpc-js";
import { billing, runs, type sessions } from "@bas/proto";
import { connectClient } from "@bas/service-kit";
import { eventually } from "@bas/testing";
import { createRequest, failure, type Harness, newProject, startHarness } from "./harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const project = newProject();
const get = (sessionId: string) => h.api.getSession({ projectId: project, sessionId });

/** Creates a session, takes its task off the queue and starts it, as a runner would. */
async function running(overrides: Partial<sessions.CreateSessionRequest> = {}) {
  const s = await h.api.createSession(createRequest(project, { task: "a task", keepAlive: true, ...overrides }));
  const work = await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });
  await h.reports.taskStarted({ sessionId: s.id, taskId: work.taskId, attempt: 1 });
  return { sessionId: s.id, taskId: work.taskId, work };
}

async function appendLedger(sessionId: string, type: string, data: unknown, ledgerType = "ledger-session") {
  const ledger = { type: ledgerType, id: sessionId };
  await h.store.append(ledger, [{ type, data }], await h.store.version(ledger));
}

const totals = (total: string): billing.Totals => ({
  inputTokens: 10,
  outputTokens: 1,
  proxyUsedMb: "2.25",
  llmCostUsd: total,
  proxyCostUsd: "0.001",
  browserCostUsd: "0.002",
  totalCostUsd: total,
});

describe("output by mode", () => {
  test("free text", async () => {
    const { sessionId, taskId } = await running();
    const refused = await failure(h.reports.taskCompleted({ sessionId, taskId, output: { a: 1 }, success: true }));
    expect(refused).toMatchObject({ code: status.INVALID_ARGUMENT, field: ["output"] });
    await h.reports.taskCompleted({ sessionId, taskId, output: "plain answer", success: true });
    expect((await get(sessionId)).output).toBe("plain answer");
  });

  test("outputSchema: the output must conform; the schema is echoed on the session", async () => {
    const schema = {
      type: "object",
      properties: { price: { type: "number" }, currency: { type: "string" } },
      required: ["price", "currency"],
    };
    const { sessionId, taskId, work } = await running({ outputSchema: schema });
    expect(work.outputSchema).toEqual(schema);
    const wrong = await failure(
      h.reports.taskCompleted({ sessionId, taskId, output: { price: "cheap" }, success: true }),
    );
    expect(wrong.code).toBe(status.INVALID_ARGUMENT);
    expect(wrong.details).toMatch(/outputSchema/);
    await h.reports.taskCompleted({ sessionId, taskId, output: { price: 19.99, currency: "EUR" }, success: true });
    expect(await get(sessionId)).toMatchObject({ output: { price: 19.99, currency: "EUR" }, outputSchema: schema });
  });

  test("codeMode: {text, code, output?}", async () => {
    const { sessionId, taskId, work } = await running({ codeMode: true });
    expect(work.codeMode).toBe(true);
    const bare = await failure(h.reports.taskCompleted({ sessionId, taskId, output: "just text", success: true }));
    expect(bare.code).toBe(status.INVALID_ARGUMENT);
    const output = { text: "Scraped 3 prices", code: "print(prices)", output: "[1, 2, 3]" };
    await h.reports.taskCompleted({ sessionId, taskId, output, success: true });
    expect(await get(sessionId)).toMatchObject({ output, codeMode: true });
  });
});

test("retried reports count once; a redelivered task (attempt 2) continues from the progress of attempt 1", async () => {
  const { sessionId, taskId } = await running();
  const step = (n: number, attempt: number) =>
    h.reports.stepRecorded({
      sessionId,
      taskId,
      step: n,
      summary: `attempt ${attempt} step ${n}`,
      messages: [],
      attempt,
      agentRecord: JSON.stringify({ step: n }),
    });
  const call = (attempt: number, n: number, inputTokens: number) =>
    h.reports.usageReported({
      sessionId,
      taskId,
      inputTokens,
      outputTokens: 10,
      usageId: `usage-${attempt}-${n}`,
      attempt,
      call: n,
    });
  await call(1, 1, 500);
  await step(1, 1);
  await step(1, 1);
  await call(1, 2, 400);
  await call(1, 2, 400);
  await step(2, 1);
  expect((await get(sessionId)).stepCount).toBe(2);

  await h.reports.taskStarted({ sessionId, taskId, attempt: 2 });
  const progress = await h.reports.getTaskProgress({ sessionId, taskId });
  expect(progress).toMatchObject({
    attempt: 2,
    lastStep: 2,
    steps: [
      { step: 1, agentRecord: '{"step":1}' },
      { step: 2, agentRecord: '{"step":2}' },
    ],
    inputTokens: 900,
    outputTokens: 20,
    lastUsage: { usageId: "usage-1-2", inputTokens: 400, outputTokens: 10 },
  });
  // Attempt 1 was superseded: its steps are refused, so its runner stops instead of acting on.
  expect((await failure(step(3, 1))).code).toBe(status.FAILED_PRECONDITION);

  await call(2, 1, 300);
  await step(3, 2);
  await h.reports.taskCompleted({ sessionId, taskId, output: "x", success: true });
  await h.reports.taskCompleted({ sessionId, taskId, output: "x", success: true });
  expect(await get(sessionId)).toMatchObject({
    status: "idle",
    stepCount: 3,
    lastStepSummary: "attempt 2 step 3",
    totalInputTokens: 1200,
    totalOutputTokens: 30,
  });
  expect((await failure(h.reports.getTaskProgress({ sessionId, taskId }))).code).toBe(status.FAILED_PRECONDITION);
});

test('costs are "0" until billing charges, then the latest running totals of the session\'s ledger', async () => {
  const { sessionId } = await running();
  expect(await get(sessionId)).toMatchObject({
    proxyUsedMb: "0",
    llmCostUsd: "0",
    proxyCostUsd: "0",
    browserCostUsd: "0",
    totalCostUsd: "0",
  });
  const charge = (total: string) =>
    billing.ChargeRecorded.toJSON(
      billing.ChargeRecorded.fromPartial({ usageId: total, projectId: project, kind: "llm", totals: totals(total) }),
    );
  await appendLedger(sessionId, "ChargeRecorded", charge("0.010"));
  await appendLedger(sessionId, "ChargeRecorded", charge("0.025"));
  const charged = await eventually(
    () => get(sessionId),
    (s) => s.totalCostUsd === "0.025",
  );
  expect(charged).toMatchObject({
    proxyUsedMb: "2.25",
    llmCostUsd: "0.025",
    proxyCostUsd: "0.001",
    browserCostUsd: "0.002",
  });
  await h.api.stopSession({ projectId: project, sessionId, strategy: "session" });
});

test("BudgetExceeded stops the task: cost cap in the summary, verdict false, then keepAlive decides", async () => {
  for (const keepAlive of [true, false]) {
    const { sessionId, taskId } = await running({ keepAlive, maxCostUsd: "0.05" });
    const exceeded = billing.BudgetExceeded.toJSON(
      billing.BudgetExceeded.fromPartial({ projectId: project, capUsd: "0.05", taskId, totals: totals("0.051") }),
    );
    await appendLedger(sessionId, "BudgetExceeded", exceeded);
    const stopped = await eventually(
      () => get(sessionId),
      (s) => s.status !== "running",
    );
    expect(stopped).toMatchObject({
      status: keepAlive ? "idle" : "stopped",
      isTaskSuccessful: false,
      lastStepSummary: "Task stopped: the cost cap of 0.05 USD was reached",
      totalCostUsd: expect.any(String),
    });
    const stale = await failure(h.reports.stepRecorded({ sessionId, taskId, step: 1, summary: "s", messages: [] }));
    expect(stale.code).toBe(status.FAILED_PRECONDITION);
  }
});

test("a v4 run's own ledger reaching its cap stops that run: failed, and the error says why", async () => {
  const api = connectClient(runs.RunsClient, `127.0.0.1:${h.service.grpcPort}`);
  const run = await api.createRun(
    runs.CreateRunRequest.fromPartial({ projectId: project, task: "spend", model: "svc-max", maxCostUsd: "0.05" }),
  );
  const work = await h.takeAssignment();
  expect(work.runId).toBe(run.id);
  await h.reports.sandboxReady({ sessionId: run.sessionId, browserId: "b" });
  await h.reports.taskStarted({ sessionId: run.sessionId, taskId: run.id, attempt: 1 });
  const exceeded = billing.BudgetExceeded.toJSON(
    billing.BudgetExceeded.fromPartial({ projectId: project, capUsd: "0.05", taskId: run.id, totals: totals("0.051") }),
  );
  // Billing's ledger of the run: its id is the run's, it does not name the session.
  await appendLedger(run.id, "BudgetExceeded", exceeded, "ledger-run");
  const ended = await eventually(
    () => api.getRun({ projectId: project, runId: run.id }),
    (r) => r.status !== "running",
  );
  expect(ended).toMatchObject({ status: "failed", error: "Task stopped: the cost cap of 0.05 USD was reached" });
  api.close();
});

test("reports about unknown sessions are NOT_FOUND, bad fields INVALID_ARGUMENT", async () => {
  const unknown = await failure(
    h.reports.sandboxReady({ sessionId: "00000000-0000-4000-8000-00000000abcd", browserId: "b" }),
  );
  expect(unknown.code).toBe(status.NOT_FOUND);
  const notUuid = await failure(h.reports.sandboxReady({ sessionId: "bas.events.>", browserId: "b" }));
  expect(notUuid.code).toBe(status.NOT_FOUND);
  const { sessionId, taskId } = await running();
  const role = await failure(
    h.reports.stepRecorded({
      sessionId,
      taskId,
      step: 1,
      summary: "s",
      messages: [{ role: "robot", type: "x", data: "", hidden: false }],
    }),
  );
  expect(role).toMatchObject({ code: status.INVALID_ARGUMENT, field: ["messages[0].role"] });
  const tokens = await failure(h.reports.usageReported({ sessionId, taskId, inputTokens: -1, outputTokens: 0 }));
  expect(tokens.code).toBe(status.INVALID_ARGUMENT);
});
