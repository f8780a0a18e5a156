import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { createNatsEventStore } from "@bas/event-store";
import Decimal from "decimal.js";
import { type BillingHarness, drained, ledgerEvents, publishUsage, startBilling } from "./support";

const PRICE_TABLE = JSON.stringify({
  models: { "svc-max": { inputPerMillionUsd: "2", outputPerMillionUsd: "10" } },
  browserPerHourUsd: "0.36",
});
// 1000 × 2/1e6 + 100 × 10/1e6 = 0.003 USD
const STEP = { model: "svc-max", inputTokens: 1000, outputTokens: 100, ownKey: false };
// A step that turned out longer than estimated: 1000 × 2/1e6 + 300 × 10/1e6 = 0.005 USD
const LONG_STEP = { ...STEP, outputTokens: 300 };

let h: BillingHarness;
beforeAll(async () => {
  h = await startBilling({ PRICE_TABLE, DEFAULT_MAX_COST_USD: "0.004" });
});
afterAll(() => h.close());

const budgetEvents = async (type: string, id: string) =>
  (await ledgerEvents(h.infra, type, id)).filter((e) => e.type === "BudgetExceeded");

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await read();
    if (ok(value)) return value;
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}`);
}

test("a cap reached mid-run: the next step is refused, the overshoot is under one step, BudgetExceeded once", async () => {
  const projectId = randomUUID();
  const sessionId = randomUUID();
  const taskId = randomUUID();
  // The runner's loop: ask before each model call, then report what the call really used.
  const actualSteps = [STEP, STEP, LONG_STEP, STEP, STEP];
  const taken: number[] = [];
  for (const [i, step] of actualSteps.entries()) {
    const answer = await h.client.checkBudget({
      projectId,
      sessionId,
      taskId,
      maxCostUsd: "0.01",
      model: "svc-max",
      ownKey: false,
      estimatedInputTokens: 1000,
      estimatedOutputTokens: 100,
    });
    expect(answer.capUsd).toBe("0.01");
    expect(answer.estimatedCostUsd).toBe("0.003");
    if (!answer.allowed) {
      expect(answer.reason).toBe("cost_cap");
      break;
    }
    taken.push(i);
    await publishUsage(h.infra, { projectId, sessionId, llm: step });
    await drained(h.infra);
  }
  // 0.003 + 0.003 + 0.005 = 0.011 ≥ 0.01 after the third step: the fourth is refused.
  expect(taken).toEqual([0, 1, 2]);
  const totals = await h.client.getTotals({ projectId, sessionId });
  expect(totals.totalCostUsd).toBe("0.011");
  // The overshoot (0.001) is less than the step that crossed the cap (0.005).
  expect(new Decimal(totals.totalCostUsd).minus("0.01").lessThan("0.005")).toBe(true);

  // Usage still trickling in after the cap (browser time) adds to the total but is not news again.
  await publishUsage(h.infra, { projectId, sessionId, browser: { milliseconds: 10_000 } }); // 10 s × 0.36/h = 0.001
  await drained(h.infra);
  expect((await h.client.getTotals({ projectId, sessionId })).totalCostUsd).toBe("0.012");
  const exceeded = await budgetEvents("ledger-session", sessionId);
  expect(exceeded).toHaveLength(1);
  expect(exceeded[0].data).toMatchObject({ projectId, capUsd: "0.01", taskId, totals: { totalCostUsd: "0.011" } });
  const refused = await h.client.checkBudget({
    projectId,
    sessionId,
    model: "svc-max",
    ownKey: false,
    estimatedInputTokens: 0,
    estimatedOutputTokens: 0,
  });
  expect(refused).toMatchObject({ allowed: false, reason: "cost_cap", capUsd: "0.01" });
});

test("the cap comes from the session's events; a new task on a session past its cap is stopped at once", async () => {
  const store = createNatsEventStore(h.infra);
  const projectId = randomUUID();
  const sessionId = randomUUID();
  const session = { type: "session", id: sessionId };
  const settings = { projectId, model: "svc-max", maxCostUsd: "0.005", useOwnKey: false, thinkingLevel: null };
  const task1 = randomUUID();
  let version = (await store.append(session, [{ type: "SessionCreated", data: settings }], 0)).version;
  version = (await store.append(session, [{ type: "TaskDispatched", data: { taskId: task1, task: "x" } }], version))
    .version;
  await until(
    () => ledgerEvents(h.infra, "ledger-session", sessionId),
    (events) => events.some((e) => e.type === "BudgetCapSet" && e.data.taskId === task1),
    "the cap to reach the ledger",
  );
  const check = await h.client.checkBudget({
    projectId,
    sessionId,
    model: "svc-max",
    ownKey: false,
    estimatedInputTokens: 1000,
    estimatedOutputTokens: 100,
  });
  expect(check).toMatchObject({ allowed: true, capUsd: "0.005" });

  await publishUsage(h.infra, { projectId, sessionId, llm: STEP });
  await publishUsage(h.infra, { projectId, sessionId, llm: STEP });
  await drained(h.infra);
  expect(await budgetEvents("ledger-session", sessionId)).toEqual([
    expect.objectContaining({ data: expect.objectContaining({ capUsd: "0.005", taskId: task1 }) }),
  ]);
  await expect(h.client.requireCredit({ projectId, sessionId })).rejects.toMatchObject({
    kind: "insufficient_credit",
  });

  // The session's total (0.006) is already past its cap: the next task is told so as soon as it is dispatched.
  const task2 = randomUUID();
  await store.append(session, [{ type: "TaskDispatched", data: { taskId: task2, task: "y" } }], version);
  const exceeded = await until(
    () => budgetEvents("ledger-session", sessionId),
    (events) => events.length === 2,
    "BudgetExceeded for the second task",
  );
  expect(exceeded[1].data).toMatchObject({ taskId: task2, capUsd: "0.005", totals: { totalCostUsd: "0.006" } });
});

test("the default cap applies when none is given", async () => {
  const projectId = randomUUID();
  const sessionId = randomUUID();
  const answer = await h.client.checkBudget({
    projectId,
    sessionId,
    model: "svc-max",
    ownKey: false,
    estimatedInputTokens: 1000,
    estimatedOutputTokens: 100,
  });
  expect(answer).toMatchObject({ allowed: true, capUsd: "0.004" });
  await publishUsage(h.infra, { projectId, sessionId, llm: STEP });
  await drained(h.infra);
  // 0.003 + 0.003 > 0.004: the second step does not fit.
  expect(
    await h.client.checkBudget({
      projectId,
      sessionId,
      model: "svc-max",
      ownKey: false,
      estimatedInputTokens: 1000,
      estimatedOutputTokens: 100,
    }),
  ).toMatchObject({ allowed: false, reason: "cost_cap", capUsd: "0.004" });

  // A session billing never heard of gets the default cap with its first charge.
  const unknown = randomUUID();
  await publishUsage(h.infra, { projectId, sessionId: unknown, llm: LONG_STEP });
  await drained(h.infra);
  expect(await budgetEvents("ledger-session", unknown)).toEqual([
    expect.objectContaining({ data: expect.objectContaining({ capUsd: "0.004", totals: expect.anything() }) }),
  ]);
});

test("a run's cap is the run's: its session's ledger carries no cap of its own", async () => {
  const projectId = randomUUID();
  const sessionId = randomUUID();
  const runId = randomUUID();
  const base = { projectId, sessionId, runId, model: "svc-max", ownKey: false };
  await h.client.checkBudget({ ...base, maxCostUsd: "0.005", estimatedInputTokens: 0, estimatedOutputTokens: 0 });
  await publishUsage(h.infra, { projectId, sessionId, runId, llm: STEP });
  await publishUsage(h.infra, { projectId, sessionId, runId, llm: STEP });
  await drained(h.infra);
  expect(await budgetEvents("ledger-run", runId)).toHaveLength(1);
  expect(await budgetEvents("ledger-session", sessionId)).toHaveLength(0);
  expect(await h.client.getTotals({ projectId, runId })).toMatchObject({ totalCostUsd: "0.006" });
});

test.each(["0", "-1", "abc", "1e3", "", "."])("a cap of %p is refused as invalid", async (maxCostUsd) => {
  await expect(
    h.client.checkBudget({
      projectId: randomUUID(),
      sessionId: randomUUID(),
      maxCostUsd,
      model: "svc-max",
      ownKey: false,
      estimatedInputTokens: 1,
      estimatedOutputTokens: 1,
    }),
  ).rejects.toMatchObject({ kind: "invalid_argument", field: ["body", "maxCostUsd"] });
});
