import {
  createDb,
  createNatsEventStore,
  createProjectionRunner,
  ensureStreams,
  migrate,
  streamNames,
} from "@bas/event-store";
import { loadModelCatalog } from "@bas/models";
import { billing } from "@bas/proto";
import { connectNats, createGrpcServer, createLogger, type Logger } from "@bas/service-kit";
import { createBillingGrpc } from "./adapters/grpc/billing-grpc";
import { startMetricsServer } from "./adapters/http/metrics-server";
import { createPrometheusMetrics } from "./adapters/http/prometheus-metrics";
import { createNatsLedgerStore } from "./adapters/nats/nats-ledger-store";
import { createUsageConsumer } from "./adapters/nats/usage-consumer";
import { type BillingTables, billingMigrations } from "./adapters/pg/migrations";
import { createPgCreditLimits } from "./adapters/pg/pg-credit-limits";
import { createPgUsageRegistry, registryDatabaseUrl } from "./adapters/pg/pg-usage-registry";
import { createSessionCapsProjection } from "./adapters/pg/session-caps-projection";
import { createBudgetQueries } from "./app/budget-queries";
import { createChargeUsage } from "./app/charge-usage";
import { createLedgers } from "./app/ledgers";
import { createSetSessionCap } from "./app/set-session-cap";
import type { BillingConfig } from "./config";
import { parseDecimal } from "./domain/money";

export interface BillingService {
  grpcPort: number;
  metricsPort: number;
  close(): Promise<void>;
}

export interface BillingDeps {
  log?: Logger;
  /** Test seam: how long an unacknowledged usage fact waits before redelivery. */
  usageAckWaitMs?: number;
  /** Test seam: how long a projection event waits before redelivery. */
  projectionAckWaitMs?: number;
}

const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** Starts billing: usage consumer, session-caps projection, gRPC `Billing` and `/metrics`. */
export async function startBillingService(config: BillingConfig, deps: BillingDeps = {}): Promise<BillingService> {
  const log = deps.log ?? createLogger("billing", config.LOG_LEVEL);
  const streams = streamNames(config.NAMESPACE);
  const nats = await connectNats(config.NATS_URL, "billing");
  const db = createDb<BillingTables>(config.DATABASE_URL);
  try {
    await ensureStreams(nats.jsm, streams);
    await migrate(db, "billing", billingMigrations);
  } catch (err) {
    await nats.nc.close();
    await db.destroy();
    throw err;
  }

  const metrics = createPrometheusMetrics();
  const ledgers = createLedgers({
    store: createNatsLedgerStore({ store: createNatsEventStore({ ...nats, streams }), jsm: nats.jsm, streams }),
  });
  const registryDb = createDb<BillingTables>(registryDatabaseUrl(config.DATABASE_URL), { max: 2 });
  const registry = createPgUsageRegistry(registryDb);
  const credits = createPgCreditLimits(db);
  for (const [projectId, limit] of Object.entries(config.PROJECT_CREDITS ?? {})) {
    await credits.set(projectId, limit);
  }
  const defaultCap = parseDecimal(config.DEFAULT_MAX_COST_USD)!;
  const pricing = { table: config.priceTable, canonical: loadModelCatalog(config.MODEL_CATALOG).canonical };

  const chargeUsage = createChargeUsage({ ledgers, registry, pricing, defaultCap, metrics, log });
  const consumer = createUsageConsumer({
    ...nats,
    streams,
    db,
    log,
    ackWaitMs: deps.usageAckWaitMs ?? config.USAGE_ACK_WAIT_MS,
    async handle(usages) {
      const outcomes = await chargeUsage(usages);
      for (const [i, outcome] of outcomes.entries()) {
        if (outcome.status === "skipped" && outcome.reason !== "empty") {
          log.warn({ usageId: usages[i].id, sequence: usages[i].sequence, ...outcome }, "usage not charged");
        }
      }
    },
  });
  metrics.setPendingSource(consumer.pending);
  const sessionCaps = createProjectionRunner({
    ...nats,
    db,
    streams,
    log,
    projection: createSessionCapsProjection(createSetSessionCap({ ledgers, defaultCap, metrics, log })),
    ackWaitMs: deps.projectionAckWaitMs,
  });

  const queries = createBudgetQueries({ ledgers, credits, pricing, defaultCap, metrics });
  const grpc = createGrpcServer();
  grpc.add(billing.BillingService, createBillingGrpc(queries, log));
  const grpcPort = await grpc.listen(config.GRPC_HOST, config.GRPC_PORT);
  const metricsServer = await startMetricsServer(metrics.registry, config.GRPC_HOST, config.METRICS_PORT);

  const prune = () =>
    registry
      .prune(config.USAGE_ID_RETENTION_DAYS)
      .catch((err: unknown) => log.warn({ err }, "pruning old usage ids failed"));
  void prune();
  const pruneTimer = setInterval(prune, PRUNE_EVERY_MS);
  pruneTimer.unref();

  await consumer.start();
  await sessionCaps.start();
  grpc.setHealth("SERVING");
  log.info({ grpcPort, metricsPort: metricsServer.port, namespace: config.NAMESPACE }, "billing started");

  let closing: Promise<void> | undefined;
  return {
    grpcPort,
    metricsPort: metricsServer.port,
    close() {
      closing ??= (async () => {
        clearInterval(pruneTimer);
        await grpc.close();
        await metricsServer.close();
        await consumer.stop();
        await sessionCaps.stop();
        await nats.nc.drain().catch(() => undefined);
        await registryDb.destroy();
        await db.destroy();
      })();
      return closing;
    },
  };
}
