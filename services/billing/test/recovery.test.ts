import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { natsUrl, startSeverableLink } from "@bas/testing";
import { type BillingHarness, drained, ledgerEvents, publishUsage, startBilling } from "./support";

const PRICE_TABLE = JSON.stringify({ models: { "svc-max": { inputPerMillionUsd: "2", outputPerMillionUsd: "10" } } });
// 1000 × 2/1e6 + 100 × 10/1e6 = 0.003 USD
const STEP = { model: "svc-max", inputTokens: 1000, outputTokens: 100, ownKey: false };

let h: BillingHarness;
beforeAll(async () => {
  // Redelivery of an unacknowledged fact takes two minutes here: recovery must not wait for it.
  h = await startBilling({ PRICE_TABLE }, { usageAckWaitMs: 120_000 });
});
afterAll(() => h.close());

/** The charges a ledger recorded, in order. */
const chargesOf = async (type: string, id: string) =>
  (await ledgerEvents(h.infra, type, id)).filter((e) => e.type === "ChargeRecorded");

test("facts a crashed billing received but never acknowledged are charged, in order, once billing is back", async () => {
  await h.stop();
  const projectId = randomUUID();
  const sessionId = randomUUID();
  const published = [];
  for (let i = 0; i < 20; i++) published.push(await publishUsage(h.infra, { projectId, sessionId, llm: STEP }));
  // The crashed replica: it pulled the first ten facts and died before acknowledging any of them.
  const consumer = await h.infra.js.consumers.get(h.infra.streams.usage.stream, "billing_usage");
  const pulled = await consumer.fetch({ max_messages: 10, expires: 5_000 });
  let held = 0;
  for await (const _ of pulled) if (++held === 10) break;
  const before = await h.infra.jsm.consumers.info(h.infra.streams.usage.stream, "billing_usage");
  expect(before.num_ack_pending).toBe(10);

  await h.restart();
  await drained(h.infra);
  expect(await h.client.getTotals({ projectId, sessionId })).toMatchObject({
    inputTokens: 20_000,
    totalCostUsd: "0.06",
  });
  const charges = await chargesOf("ledger-session", sessionId);
  expect(charges.map((e) => e.data.usageId)).toEqual(published.map((u) => u.id));
});

test("two replicas: one charges, the other takes over when it goes away; nothing is lost or doubled", async () => {
  const second = await h.replica();
  try {
    const projectId = randomUUID();
    const sessionId = randomUUID();
    for (let i = 0; i < 30; i++) await publishUsage(h.infra, { projectId, sessionId, llm: STEP });
    await drained(h.infra);
    await h.stop();
    for (let i = 0; i < 30; i++) {
      await publishUsage(h.infra, { projectId, sessionId, llm: STEP });
      if (i % 10 === 0) await sleep(5);
    }
    await drained(h.infra);
    // 60 × 0.003 = 0.18
    const charges = await chargesOf("ledger-project", projectId);
    expect(charges).toHaveLength(60);
    expect(charges.at(-1)!.data.totals).toMatchObject({ inputTokens: 60_000, totalCostUsd: "0.18" });
  } finally {
    await second.close();
    await h.restart();
  }
});

test("a replica cut off from NATS gives up charging: one that reaches NATS charges meanwhile; nothing is lost or doubled", async () => {
  // The replica that leads reaches NATS through a link the test cuts.
  await h.stop();
  const nats = new URL(natsUrl());
  const link = await startSeverableLink({ host: nats.hostname, port: Number(nats.port) });
  const cutOff = await h.replica({ NATS_URL: `nats://${link.address}` });
  let restarted = false;
  try {
    const projectId = randomUUID();
    const sessionId = randomUUID();
    for (let i = 0; i < 10; i++) await publishUsage(h.infra, { projectId, sessionId, llm: STEP });
    await drained(h.infra);
    await h.restart();
    restarted = true;
    link.cut();
    // Without giving up the lead, the cut-off replica keeps it (its Postgres connection is fine): nothing is charged.
    for (let i = 0; i < 10; i++) await publishUsage(h.infra, { projectId, sessionId, llm: STEP });
    await drained(h.infra);
    const charges = await chargesOf("ledger-project", projectId);
    expect(charges).toHaveLength(20);
    expect(charges.at(-1)!.data.totals).toMatchObject({ inputTokens: 20_000, totalCostUsd: "0.06" });
  } finally {
    link.restore();
    await cutOff.close();
    await link.close();
    if (!restarted) await h.restart();
  }
}, 60_000);

test("a fact removed from the stream leaves a hole billing steps over instead of waiting for it", async () => {
  await h.stop();
  const projectId = randomUUID();
  const sessionId = randomUUID();
  for (let i = 0; i < 5; i++) await publishUsage(h.infra, { projectId, sessionId, llm: STEP });
  const { state } = await h.infra.jsm.streams.info(h.infra.streams.usage.stream);
  await h.infra.jsm.streams.deleteMessage(h.infra.streams.usage.stream, state.last_seq - 2);
  await h.restart();
  await drained(h.infra);
  // 4 × 0.003 = 0.012
  expect(await h.client.getTotals({ projectId, sessionId })).toMatchObject({
    inputTokens: 4_000,
    totalCostUsd: "0.012",
  });
});
