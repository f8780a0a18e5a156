/**
 * Billing benchmark (issue 6): usage facts priced per second (a backlog drained by a freshly started billing, against
 * a bare ack-only consumer of the same stream as the transport's floor), and the lag from a usage fact published to
 * the updated total readable through GetTotals, p50/p99, at a steady 1,000 facts/s. Totals are checked exactly.
 * Run: npx tsx bench/billing.ts   (BACKLOG to change the backlog size, default 10000; STEADY_S, default 10)
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureStreams, streamNames } from "@bas/event-store";
import { billing } from "@bas/proto";
import { checkGrpcHealth, connectClient, connectNats } from "@bas/service-kit";
import { freePort, waitForExit } from "@bas/embedded-infra";
import { spawn } from "node:child_process";
import { AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
import Decimal from "decimal.js";
import { benchInfra } from "./support/infra";
import { ms, summarize } from "./support/stats";

const BACKLOG = Number(process.env.BACKLOG ?? 10_000);
const STEADY_S = Number(process.env.STEADY_S ?? 10);
const RATE = 1_000;
const SESSIONS = 50;
const PROJECTS = 5;
// With this table one llm fact costs 1000 × 2/1e6 + 100 × 10/1e6 = 0.003 USD; 1 MB of proxy 0.004; 1 s browser 0.0001
const PRICE_TABLE = JSON.stringify({
  models: { "svc-max": { inputPerMillionUsd: "2", outputPerMillionUsd: "10" } },
  proxyPerGbUsd: "4",
  browserPerHourUsd: "0.36",
});
const COST = { llm: "0.003", proxy: "0.004", browser: "0.0001" };

async function main() {
  const infra = await benchInfra();
  try {
    await run(infra.natsUrl, infra.databaseUrl);
  } finally {
    await infra.close();
  }
}

async function run(natsUrl: string, databaseUrl: string) {
  const namespace = `benchbilling${Date.now()}`;
  const streams = streamNames(namespace);
  const nats = await connectNats(natsUrl, "bench-billing");
  await ensureStreams(nats.jsm, streams);
  const sessions = Array.from({ length: SESSIONS }, (_, i) => ({
    projectId: `project-${i % PROJECTS}`,
    sessionId: randomUUID(),
    browserId: randomUUID(),
    expected: { cost: new Decimal(0), inputTokens: 0 },
  }));
  let published = 0;

  /** Publishes fact number n (llm 8 in 10, proxy 1 in 10, browser 1 in 10) and books what it must cost. */
  function publish(n: number): {
    usageId: string;
    sessionIndex: number;
    inputTokensAfter: number;
    ack: Promise<unknown>;
  } {
    const sessionIndex = n % SESSIONS;
    const s = sessions[sessionIndex];
    const kind = n % 10 === 8 ? "proxy" : n % 10 === 9 ? "browser" : "llm";
    const usage = billing.UsageRecorded.fromPartial({
      id: randomUUID(),
      projectId: s.projectId,
      sessionId: s.sessionId,
      browserId: s.browserId,
      occurredAt: new Date(),
      ...(kind === "llm" ? { llm: { model: "svc-max", inputTokens: 1000, outputTokens: 100, ownKey: false } } : {}),
      ...(kind === "proxy" ? { proxy: { bytes: 1_000_000 } } : {}),
      ...(kind === "browser" ? { browser: { milliseconds: 1_000 } } : {}),
    });
    s.expected.cost = s.expected.cost.plus(COST[kind]);
    if (kind === "llm") s.expected.inputTokens += 1000;
    published++;
    const ack = nats.js.publish(streams.usage.subject(kind), JSON.stringify(billing.UsageRecorded.toJSON(usage)), {
      msgID: usage.id,
    });
    return { usageId: usage.id, sessionIndex, inputTokensAfter: s.expected.inputTokens, ack };
  }

  // 1. The backlog, published while billing is down.
  for (let n = 0; n < BACKLOG; n += 500) {
    await Promise.all(Array.from({ length: Math.min(500, BACKLOG - n) }, (_, i) => publish(n + i).ack));
  }

  // 2. Floor: an ack-only consumer configured like billing's (same stream, same max_ack_pending).
  await nats.jsm.consumers.add(streams.usage.stream, {
    durable_name: "bench_floor",
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    max_ack_pending: 1024,
  });
  const floorStarted = performance.now();
  const floorMessages = await (await nats.js.consumers.get(streams.usage.stream, "bench_floor")).consume();
  let floorCount = 0;
  for await (const m of floorMessages) {
    m.ack();
    if (++floorCount >= BACKLOG) break;
  }
  const floorRate = BACKLOG / ((performance.now() - floorStarted) / 1000);
  await nats.jsm.consumers.delete(streams.usage.stream, "bench_floor");

  // 3. Billing, in a process of its own as deployed, drains the backlog.
  const [grpcPort, metricsPort] = [await freePort(), await freePort()];
  const service = spawn(process.execPath, ["--import", "tsx", "services/billing/src/main.ts"], {
    env: {
      ...process.env,
      NATS_URL: natsUrl,
      DATABASE_URL: databaseUrl,
      NAMESPACE: namespace,
      GRPC_PORT: String(grpcPort),
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: "warn",
      PRICE_TABLE,
      DEFAULT_MAX_COST_USD: "1000000",
      OTEL_SDK_DISABLED: "true",
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const client = connectClient(billing.BillingClient, `127.0.0.1:${grpcPort}`);
  try {
    while (!(await checkGrpcHealth(`127.0.0.1:${grpcPort}`, 500))) {
      if (service.exitCode !== null) throw new Error("billing exited at start");
      await sleep(50);
    }
    await measure();
  } finally {
    client.close();
    service.kill("SIGTERM");
    await waitForExit(service, 20_000);
    await nats.nc.drain();
  }

  async function measure() {
    const pending = async () => {
      const info = await nats.jsm.consumers.info(streams.usage.stream, "billing_usage");
      return info.num_pending + info.num_ack_pending;
    };
    /** Waits for billing to charge everything published; a stuck billing fails the benchmark instead of hanging it. */
    const drained = async () => {
      const deadline = Date.now() + 120_000;
      while ((await pending()) > 0) {
        if (Date.now() > deadline) throw new Error("billing did not drain the usage stream within 2 minutes");
        await sleep(20);
      }
    };
    // Timed from the backlog left once billing answers (its start-up, tsx compiling included, is not pricing).
    const backlog = await pending();
    const drainStarted = performance.now();
    await drained();
    const drainRate = backlog / ((performance.now() - drainStarted) / 1000);

    // 4. Steady 1,000 facts/s. Every 10th fact is a probe: when its charge lands on the session's ledger (seen on a
    //    core NATS subscription, no polling), one GetTotals call must already show it; the lag is publish → that answer.
    const lags: number[] = [];
    const probes = new Map<string, { sent: number; sessionIndex: number; inputTokensAfter: number }>();
    const answered: Promise<void>[] = [];
    const onCharge = (msg: { json(): unknown }) => {
      const event = msg.json() as { type: string; data: { usageId: string } };
      const probe = event.type === "ChargeRecorded" ? probes.get(event.data.usageId) : undefined;
      if (!probe) return;
      probes.delete(event.data.usageId);
      const s = sessions[probe.sessionIndex];
      answered.push(
        client.getTotals({ projectId: s.projectId, sessionId: s.sessionId }).then((totals) => {
          if (totals.inputTokens < probe.inputTokensAfter) throw new Error("GetTotals missed a charge on its ledger");
          lags.push(performance.now() - probe.sent);
        }),
      );
    };
    // Probes are facts BACKLOG + 10k, so they all fall on the sessions ≡ BACKLOG (mod 10): watch only those ledgers.
    const watchers = sessions
      .filter((_, i) => i % 10 === BACKLOG % 10)
      .map((s) =>
        nats.nc.subscribe(streams.events.subject("ledger-session", s.sessionId), { callback: (_e, m) => onCharge(m) }),
      );
    const total = RATE * STEADY_S;
    const steadyStarted = performance.now();
    for (let i = 0; i < total; i++) {
      const due = steadyStarted + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const sent = performance.now();
      const { usageId, sessionIndex, inputTokensAfter } = publish(BACKLOG + i);
      if (i % 10 === 0) probes.set(usageId, { sent, sessionIndex, inputTokensAfter });
    }
    const publishSeconds = (performance.now() - steadyStarted) / 1000;
    await drained();
    await sleep(100);
    for (const w of watchers) w.unsubscribe();
    await Promise.all(answered);

    // 5. Every session's total is exact.
    let wrong = 0;
    for (const s of sessions) {
      const totals = await client.getTotals({ projectId: s.projectId, sessionId: s.sessionId });
      if (totals.totalCostUsd !== s.expected.cost.toFixed() || totals.inputTokens !== s.expected.inputTokens) wrong++;
    }

    const lag = summarize(lags);
    console.log(
      `usage facts priced per second (draining a backlog, ${backlog} left at start): ${drainRate.toFixed(0)}`,
    );
    console.log(`  floor: an ack-only consumer of the same stream: ${floorRate.toFixed(0)}/s`);
    console.log(`steady load: ${(total / publishSeconds).toFixed(0)} facts/s offered for ${STEADY_S} s`);
    console.log(
      `  lag publish → GetTotals shows it (n=${lag.n}): p50 ${ms(lag.p50)}  p95 ${ms(lag.p95)}  p99 ${ms(lag.p99)}`,
    );
    console.log(`  probes never seen on their ledger: ${probes.size}`);
    console.log(`totals exact: ${SESSIONS - wrong}/${SESSIONS} sessions (${published} facts)`);
    if (wrong > 0 || probes.size > 0) process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
