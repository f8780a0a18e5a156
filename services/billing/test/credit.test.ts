import { randomUUID } from "node:crypto";
import { type BillingHarness, drained, publishUsage, startBilling } from "./support";

const PRICE_TABLE = JSON.stringify({ models: { "svc-max": { inputPerMillionUsd: "2", outputPerMillionUsd: "10" } } });
// 0.003 USD per step (1000 × 2/1e6 + 100 × 10/1e6)
const STEP = { model: "svc-max", inputTokens: 1000, outputTokens: 100, ownKey: false };
const limited = randomUUID();

let h: BillingHarness;
beforeAll(async () => {
  h = await startBilling({ PRICE_TABLE, PROJECT_CREDITS: JSON.stringify({ [limited]: "0.005" }) });
});
afterAll(() => h.close());

test("a project with credit left may create work; once spent, RequireCredit fails with the 402 error kind", async () => {
  expect(await h.client.getCredit({ projectId: limited })).toEqual({
    balanceUsd: "0.005",
    limitUsd: "0.005",
    spentUsd: "0",
  });
  await expect(h.client.requireCredit({ projectId: limited })).resolves.toMatchObject({ balanceUsd: "0.005" });

  const sessionId = randomUUID();
  const step = { projectId: limited, sessionId, maxCostUsd: "100", model: "svc-max", ownKey: false };
  expect(await h.client.checkBudget({ ...step, estimatedInputTokens: 1000, estimatedOutputTokens: 100 })).toMatchObject(
    {
      allowed: true,
    },
  );
  await publishUsage(h.infra, { projectId: limited, sessionId, llm: STEP });
  await drained(h.infra);
  // 0.005 − 0.003 = 0.002 left: a step estimated at 0.003 no longer fits the credit.
  expect(await h.client.checkBudget({ ...step, estimatedInputTokens: 1000, estimatedOutputTokens: 100 })).toMatchObject(
    {
      allowed: false,
      reason: "insufficient_credit",
    },
  );
  await publishUsage(h.infra, { projectId: limited, sessionId, llm: STEP });
  await drained(h.infra);

  expect(await h.client.getCredit({ projectId: limited })).toEqual({
    balanceUsd: "-0.001",
    limitUsd: "0.005",
    spentUsd: "0.006",
  });
  await expect(h.client.requireCredit({ projectId: limited })).rejects.toMatchObject({
    kind: "insufficient_credit",
    details: "Insufficient credits",
  });
});

test("a project without a credit limit has unlimited credit", async () => {
  const projectId = randomUUID();
  await publishUsage(h.infra, { projectId, sessionId: randomUUID(), llm: STEP });
  await drained(h.infra);
  const credit = await h.client.getCredit({ projectId });
  expect(credit.balanceUsd).toBeUndefined();
  expect(credit.limitUsd).toBeUndefined();
  expect(credit.spentUsd).toBe("0.003");
  await expect(h.client.requireCredit({ projectId })).resolves.toBeDefined();
});

test("an operator sets, keeps across restarts and removes a credit limit", async () => {
  const projectId = randomUUID();
  await publishUsage(h.infra, { projectId, sessionId: randomUUID(), llm: STEP });
  await drained(h.infra);
  expect(await h.client.setCredit({ projectId, limitUsd: "0.003" })).toEqual({
    balanceUsd: "0",
    limitUsd: "0.003",
    spentUsd: "0.003",
  });
  await expect(h.client.requireCredit({ projectId })).rejects.toMatchObject({ kind: "insufficient_credit" });
  await h.stop();
  await h.restart();
  expect((await h.client.getCredit({ projectId })).balanceUsd).toBe("0");
  expect(await h.client.setCredit({ projectId, limitUsd: "1.5" })).toMatchObject({ balanceUsd: "1.497" });
  await expect(h.client.requireCredit({ projectId })).resolves.toMatchObject({ balanceUsd: "1.497" });
  expect((await h.client.setCredit({ projectId })).balanceUsd).toBeUndefined();
  await expect(h.client.setCredit({ projectId, limitUsd: "-1" })).rejects.toMatchObject({
    kind: "invalid_argument",
    field: ["body", "limitUsd"],
  });
});
