import { randomUUID } from "node:crypto";
import { billing } from "@bas/proto";
import { connectClient, type PromiseClient } from "@bas/service-kit";
import { createTestInfra, type TestInfra } from "@bas/testing";
import { loadBillingConfig } from "../src/config";
import { type BillingDeps, type BillingService, startBillingService } from "../src/service";

export interface BillingHarness {
  infra: TestInfra;
  env: Record<string, string>;
  service: BillingService;
  client: PromiseClient<billing.BillingClient>;
  /** Stops billing (the streams and database stay). */
  stop(): Promise<void>;
  /** Starts billing again on the same streams and database. */
  restart(): Promise<void>;
  /** Another billing replica on the same streams and database, with `env` on top (the caller closes it). */
  replica(env?: Record<string, string>): Promise<BillingService>;
  close(): Promise<void>;
}

/** A billing service on a fresh namespace and database, with `env` on top of the test defaults. */
export async function startBilling(env: Record<string, string> = {}, deps: BillingDeps = {}): Promise<BillingHarness> {
  const infra = await createTestInfra();
  const fullEnv = {
    NATS_URL: process.env.NATS_URL!,
    DATABASE_URL: infra.databaseUrl,
    NAMESPACE: infra.namespace,
    GRPC_PORT: "0",
    METRICS_PORT: "0",
    LOG_LEVEL: "silent",
    ...env,
  };
  const start = (more: Record<string, string> = {}) =>
    startBillingService(loadBillingConfig({ ...fullEnv, ...more }), {
      usageAckWaitMs: 2_000,
      projectionAckWaitMs: 2_000,
      ...deps,
    });
  const harness: BillingHarness = {
    infra,
    env: fullEnv,
    service: await start(),
    client: undefined as never,
    async stop() {
      harness.client.close();
      await harness.service.close();
    },
    async restart() {
      harness.service = await start();
      harness.client = connectClient(billing.BillingClient, `127.0.0.1:${harness.service.grpcPort}`);
    },
    replica: start,
    async close() {
      harness.client.close();
      await harness.service.close();
      await infra.close();
    },
  };
  harness.client = connectClient(billing.BillingClient, `127.0.0.1:${harness.service.grpcPort}`);
  return harness;
}

export type UsageInput = Omit<billing.UsageRecorded, "id" | "occurredAt"> & { id?: string };

/** Publishes a usage fact the way the runner and browser-pool do: JSON of UsageRecorded, msg id = usage id. */
export async function publishUsage(
  infra: TestInfra,
  usage: UsageInput,
  options: { msgId?: string | null } = {},
): Promise<billing.UsageRecorded> {
  const full = billing.UsageRecorded.fromPartial({ ...usage, id: usage.id ?? randomUUID(), occurredAt: new Date() });
  const kind = full.llm ? "llm" : full.proxy ? "proxy" : "browser";
  const msgID = options.msgId === null ? undefined : (options.msgId ?? full.id);
  await infra.js.publish(infra.streams.usage.subject(kind), JSON.stringify(billing.UsageRecorded.toJSON(full)), {
    ...(msgID ? { msgID } : {}),
  });
  return full;
}

/** Every event of one ledger, in order (type and data). */
export async function ledgerEvents(
  infra: TestInfra,
  type: string,
  id: string,
): Promise<{ type: string; id: string; data: any }[]> {
  const subject = infra.streams.events.subject(type, id);
  const events: { type: string; id: string; data: any }[] = [];
  for (let seq = 1; ; ) {
    let m: Awaited<ReturnType<typeof infra.jsm.streams.getMessage>>;
    try {
      m = await infra.jsm.streams.getMessage(infra.streams.events.stream, { seq, next_by_subj: subject } as never);
    } catch {
      break;
    }
    if (!m) break;
    const e = m.json() as { type: string; id: string; data: any };
    events.push({ type: e.type, id: e.id, data: e.data });
    seq = m.seq + 1;
  }
  return events;
}

/** Waits until billing has charged every usage fact in the stream. */
export async function drained(infra: TestInfra, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = await infra.jsm.consumers.info(infra.streams.usage.stream, "billing_usage").catch(() => undefined);
    if (info && info.num_pending === 0 && info.num_ack_pending === 0) return;
    if (Date.now() > deadline) throw new Error(`billing did not drain the usage stream: ${JSON.stringify(info)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The spec's decimal-string pattern. */
export const DECIMAL = /^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$/;
