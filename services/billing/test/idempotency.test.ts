import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { createNatsEventStore } from "@bas/event-store";
import { createLogger } from "@bas/service-kit";
import { createNatsLedgerStore } from "../src/adapters/nats/nats-ledger-store";
import { createPgUsageRegistry } from "../src/adapters/pg/pg-usage-registry";
import { createChargeUsage } from "../src/app/charge-usage";
import { createLedgers } from "../src/app/ledgers";
import type { LedgerStore } from "../src/app/ports";
import { parseDecimal } from "../src/domain/money";
import { parsePriceTable } from "../src/domain/price-table";
import { type BillingHarness, drained, ledgerEvents, publishUsage, startBilling } from "./support";

const PRICE_TABLE = JSON.stringify({ models: { "svc-max": { inputPerMillionUsd: "2", outputPerMillionUsd: "10" } } });
// One step as the runner reports it: 1000 × 2/1e6 + 100 × 10/1e6 = 0.002 + 0.001 = 0.003 USD
const STEP = { model: "svc-max", inputTokens: 1000, outputTokens: 100, ownKey: false };

let h: BillingHarness;
beforeAll(async () => {
  h = await startBilling({ PRICE_TABLE });
});
afterAll(() => h.close());

const chargesOf = async (type: string, id: string) =>
  (await ledgerEvents(h.infra, type, id)).filter((e) => e.type === "ChargeRecorded");

test("the same usage facts published twice (new stream messages, same usage ids) are charged once", async () => {
  const projectId = randomUUID();
  const sessionId = randomUUID();
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  for (const round of [1, 2]) {
    for (const id of ids) {
      // A distinct Nats-Msg-Id each round, so the stream itself keeps both copies and billing must see through it.
      await publishUsage(h.infra, { id, projectId, sessionId, llm: STEP }, { msgId: `${id}-${round}` });
    }
  }
  await drained(h.infra);
  const totals = await h.client.getTotals({ projectId, sessionId });
  expect(totals).toMatchObject({ inputTokens: 3000, outputTokens: 300, llmCostUsd: "0.009", totalCostUsd: "0.009" });
  expect((await chargesOf("ledger-session", sessionId)).map((e) => e.data.usageId)).toEqual(ids);
  expect((await chargesOf("ledger-project", projectId)).map((e) => e.data.usageId)).toEqual(ids);
});

test("a consumer redelivering every fact (billing restarted with its consumer reset) charges nothing again", async () => {
  const projectId = randomUUID();
  const sessionId = randomUUID();
  for (let i = 0; i < 5; i++) await publishUsage(h.infra, { projectId, sessionId, llm: STEP });
  await drained(h.infra);
  expect(await h.client.getTotals({ projectId, sessionId })).toMatchObject({ totalCostUsd: "0.015" });

  await h.stop();
  // Forget what was acknowledged: the new consumer delivers the whole stream again, every fact a redelivery.
  await h.infra.jsm.consumers.delete(h.infra.streams.usage.stream, "billing_usage");
  await h.restart();
  await drained(h.infra);

  expect(await h.client.getTotals({ projectId, sessionId })).toMatchObject({
    inputTokens: 5000,
    totalCostUsd: "0.015",
  });
  expect(await chargesOf("ledger-session", sessionId)).toHaveLength(5);
  expect(await chargesOf("ledger-project", projectId)).toHaveLength(5);
});

test("a crash between a usage's ledgers (session charged, project not) is completed once on retry", async () => {
  const log = createLogger("billing-test", "silent");
  const real = createNatsLedgerStore({
    store: createNatsEventStore(h.infra),
    jsm: h.infra.jsm,
    streams: h.infra.streams,
  });
  let failProject = true;
  const flaky: LedgerStore = {
    last: real.last,
    async append(type, id, events, expected, ids) {
      if (type === "ledger-project" && failProject) {
        failProject = false;
        throw new Error("connection lost");
      }
      return real.append(type, id, events, expected, ids);
    },
  };
  const noMetrics = { charged() {}, budgetExceeded() {}, usageSkipped() {}, unpricedModel() {} };
  const chargeUsage = createChargeUsage({
    ledgers: createLedgers({ store: flaky }),
    registry: createPgUsageRegistry(h.infra.db),
    pricing: { table: parsePriceTable(JSON.parse(PRICE_TABLE)) },
    defaultCap: parseDecimal("100")!,
    metrics: noMetrics,
    log,
  });
  const projectId = randomUUID();
  const sessionId = randomUUID();
  // A sequence far beyond this test stream's own facts, as the consumer would hand it over.
  const usage = { id: randomUUID(), sequence: 1_000_000, projectId, sessionId, kind: "llm" as const, ...STEP };

  await expect(chargeUsage([usage])).rejects.toThrow("connection lost");
  expect(await chargesOf("ledger-session", sessionId)).toHaveLength(1);
  expect(await chargesOf("ledger-project", projectId)).toHaveLength(0);

  await expect(chargeUsage([usage])).resolves.toMatchObject([{ status: "charged" }]);
  await expect(chargeUsage([usage])).resolves.toMatchObject([{ status: "charged" }]);
  expect(await chargesOf("ledger-session", sessionId)).toHaveLength(1);
  expect(await chargesOf("ledger-project", projectId)).toHaveLength(1);
  expect(await h.client.getTotals({ projectId })).toMatchObject({ totalCostUsd: "0.003" });
});

test("billing stopped mid-stream and started again: the usage waits in the stream and totals come out exact", async () => {
  const projectId = randomUUID();
  const sessionId = randomUUID();
  const publish = async (count: number) => {
    for (let i = 0; i < count; i++) {
      await publishUsage(h.infra, { projectId, sessionId, llm: STEP });
      if (i % 10 === 0) await sleep(5);
    }
  };
  // Billing is stopped once it has charged some of the first facts (it may be in the middle of the others), and the
  // rest arrive while it is down. (Publishing all of them at once let billing, when quick, charge every one before
  // the stop, and nothing was left waiting.)
  const first = publish(40);
  for (;;) {
    const { inputTokens } = await h.client.getTotals({ projectId, sessionId });
    if (inputTokens >= 10_000) break;
    await sleep(5);
  }
  await h.stop();
  await first;
  await publish(80);
  const info = await h.infra.jsm.consumers.info(h.infra.streams.usage.stream, "billing_usage");
  expect(info.num_pending).toBeGreaterThan(0);

  await h.restart();
  await drained(h.infra);
  // 120 × 0.003 = 0.36
  expect(await h.client.getTotals({ projectId, sessionId })).toMatchObject({
    inputTokens: 120_000,
    outputTokens: 12_000,
    llmCostUsd: "0.36",
    totalCostUsd: "0.36",
  });
  expect(await chargesOf("ledger-project", projectId)).toHaveLength(120);
});
