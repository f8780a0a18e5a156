import { randomUUID } from "node:crypto";
import { type BillingHarness, DECIMAL, drained, ledgerEvents, publishUsage, startBilling } from "./support";

/** A price table with round-ish numbers, so every expectation below can be worked out by hand. */
const PRICE_TABLE = JSON.stringify({
  models: {
    "svc-max": { inputPerMillionUsd: "2.5", outputPerMillionUsd: "10" },
    "svc-mini": { inputPerMillionUsd: "0.15", outputPerMillionUsd: "0.6" },
  },
  ownKeyFactor: "0.1",
  proxyPerGbUsd: "4",
  browserPerHourUsd: "0.06",
});

let h: BillingHarness;
beforeAll(async () => {
  h = await startBilling({ PRICE_TABLE });
});
afterAll(() => h.close());

test("known tokens, proxy bytes and browser time: every cost field equals the hand-computed value", async () => {
  const projectId = randomUUID();
  const sessionId = randomUUID();
  const browserId = randomUUID();
  const scope = { projectId, sessionId };
  // 12345 × 2.5/1e6 + 678 × 10/1e6 = 0.0308625 + 0.00678 = 0.0376425
  await publishUsage(h.infra, {
    ...scope,
    llm: { model: "svc-max", inputTokens: 12345, outputTokens: 678, ownKey: false },
  });
  // own key: (1000 × 2.5 + 2000 × 10)/1e6 × 0.1 = 0.0225 × 0.1 = 0.00225
  await publishUsage(h.infra, {
    ...scope,
    llm: { model: "svc-max", inputTokens: 1000, outputTokens: 2000, ownKey: true },
  });
  // svc-latest is an alias of svc-max: 100 × 2.5/1e6 = 0.00025
  await publishUsage(h.infra, {
    ...scope,
    llm: { model: "svc-latest", inputTokens: 100, outputTokens: 0, ownKey: false },
  });
  // svc-mini: 3 × 0.15/1e6 + 7 × 0.6/1e6 = 0.00000045 + 0.0000042 = 0.00000465
  await publishUsage(h.infra, { ...scope, llm: { model: "svc-mini", inputTokens: 3, outputTokens: 7, ownKey: false } });
  // 1,234,567 bytes = 1.234567 MB; × 4 USD / 1e9 bytes = 0.004938268
  await publishUsage(h.infra, { ...scope, browserId, proxy: { bytes: 1_234_567 } });
  // 90 s at 0.06 USD/h = 0.0015
  await publishUsage(h.infra, { ...scope, browserId, browser: { milliseconds: 90_000 } });
  // 1 ms at 0.06 USD/h = 0.0000000166666… → 0.0000000167 at the ledger's 10 decimal places
  await publishUsage(h.infra, { ...scope, browserId, browser: { milliseconds: 1 } });
  await drained(h.infra);

  // llm 0.0376425 + 0.00225 + 0.00025 + 0.00000465 = 0.04014715
  // total 0.04014715 + 0.004938268 + 0.0015000167 = 0.0465854347
  const expectedSession = {
    inputTokens: 12345 + 1000 + 100 + 3,
    outputTokens: 678 + 2000 + 7,
    proxyUsedMb: "1.234567",
    llmCostUsd: "0.04014715",
    proxyCostUsd: "0.004938268",
    browserCostUsd: "0.0015000167",
    totalCostUsd: "0.0465854347",
  };
  expect(await h.client.getTotals({ projectId, sessionId })).toEqual(expectedSession);
  expect(await h.client.getTotals({ projectId })).toEqual(expectedSession);
  // The browser's ledger holds only what its browser used: 0.004938268 + 0.0015000167 = 0.0064382847
  expect(await h.client.getTotals({ projectId, browserId })).toEqual({
    inputTokens: 0,
    outputTokens: 0,
    proxyUsedMb: "1.234567",
    llmCostUsd: "0",
    proxyCostUsd: "0.004938268",
    browserCostUsd: "0.0015000167",
    totalCostUsd: "0.0064382847",
  });

  // What the sessions read model copies: the last ChargeRecorded on the session's ledger carries the same totals.
  const events = await ledgerEvents(h.infra, "ledger-session", sessionId);
  const charges = events.filter((e) => e.type === "ChargeRecorded");
  expect(charges.map((e) => e.data.amountUsd)).toEqual([
    "0.0376425",
    "0.00225",
    "0.00025",
    "0.00000465",
    "0.004938268",
    "0.0015",
    "0.0000000167",
  ]);
  expect(charges.at(-1)!.data.totals).toEqual(expectedSession);
  for (const e of charges) {
    for (const value of [e.data.amountUsd, ...Object.values(e.data.totals).filter((v) => typeof v === "string")]) {
      expect(value).toMatch(DECIMAL);
    }
  }
});

test("another project's session is not found; a session with no usage yet has zero totals", async () => {
  const projectId = randomUUID();
  const sessionId = randomUUID();
  await publishUsage(h.infra, { projectId, sessionId, proxy: { bytes: 1000 } });
  await drained(h.infra);
  await expect(h.client.getTotals({ projectId: randomUUID(), sessionId })).rejects.toMatchObject({ kind: "not_found" });
  expect(await h.client.getTotals({ projectId, sessionId: randomUUID() })).toEqual({
    inputTokens: 0,
    outputTokens: 0,
    proxyUsedMb: "0",
    llmCostUsd: "0",
    proxyCostUsd: "0",
    browserCostUsd: "0",
    totalCostUsd: "0",
  });
});
