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
import {
  connectNats,
  createGrpcServer,
  createLogger,
  type Logger,
  startMetricsServer,
  startWithCleanup,
} from "@bas/service-kit";
import { billingServer } from "./adapters/grpc/billing-server";
import { createNatsLedgerStore } from "./adapters/nats/nats-ledger-store";
import { createBillingMetrics } from "./adapters/prometheus/billing-metrics";
import { createUsageConsumer } from "./adapters/nats/usage-consumer";
import { type BillingTables, billingMigrations } from "./adapters/pg/migrations";
import { createPgCreditLimits } from "./adapters/pg/pg-credit-limits";
import { createPgUsageRegistry, registryDatabaseUrl } from "./adapters/pg/pg-usage-registry";
import { sessionCapsProjection } from "./adapters/pg/session-caps-projection";
import { createBudgetQueries } from "./app/budget-queries";
import { withChargeSpans } from "./app/charge-spans";
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
export function startBillingService(config: BillingConfig, deps: BillingDeps = {}): Promise<BillingService> {
  return startWithCleanup(async (cleanup) => {
    const log = deps.log ?? createLogger("billing", config.LOG_LEVEL);
    const streams = streamNames(config.NAMESPACE);
    const nats = await connectNats(config.NATS_URL, "billing");
    cleanup.defer(() => nats.nc.drain().catch(() => undefined));
    const db = createDb<BillingTables>(config.DATABASE_URL);
    cleanup.defer(() => db.destroy());
    await ensureStreams(nats.jsm, streams, config.NATS_REPLICAS);
    await migrate(db, "billing", billingMigrations);

    const metrics = createBillingMetrics();
    const ledgers = createLedgers({
      store: createNatsLedgerStore({ store: createNatsEventStore({ ...nats, streams }), jsm: nats.jsm, streams }),
    });
    const registryDb = createDb<BillingTables>(registryDatabaseUrl(config.DATABASE_URL), { max: 2 });
    cleanup.defer(() => registryDb.destroy());
    const registry = createPgUsageRegistry(registryDb);
    const credits = createPgCreditLimits(db);
    for (const [projectId, limit] of Object.entries(config.PROJECT_CREDITS ?? {})) {
      await credits.set(projectId, limit);
    }
    const defaultCap = parseDecimal(config.DEFAULT_MAX_COST_USD)!;
    const pricing = { table: config.priceTable, canonical: loadModelCatalog(config.MODEL_CATALOG).canonical };

    const chargeUsage = withChargeSpans(createChargeUsage({ ledgers, registry, pricing, defaultCap, metrics, log }));
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
    const sessionCaps = createProjectionRunner({
      ...nats,
      db,
      streams,
      log,
      projection: sessionCapsProjection(createSetSessionCap({ ledgers, defaultCap, metrics, log })),
      ackWaitMs: deps.projectionAckWaitMs,
    });

    const prune = () =>
      registry
        .prune(config.USAGE_ID_RETENTION_DAYS)
        .catch((err: unknown) => log.warn({ err }, "pruning old usage ids failed"));
    void prune();
    const pruneTimer = setInterval(prune, PRUNE_EVERY_MS);
    pruneTimer.unref();
    cleanup.defer(() => clearInterval(pruneTimer));

    cleanup.defer(() => consumer.stop());
    await consumer.start();
    cleanup.defer(() => sessionCaps.stop());
    await sessionCaps.start();
    metrics.watchConsumers(nats.jsm, [consumer.consumer, sessionCaps.consumer]);

    // Last set up, first closed: no new calls while the rest stops.
    const queries = createBudgetQueries({ ledgers, credits, pricing, defaultCap, metrics });
    const grpc = createGrpcServer({ onCall: metrics.grpcCall });
    grpc.add(billing.BillingService, billingServer(queries, log));
    const grpcPort = await grpc.listen(config.GRPC_HOST, config.GRPC_PORT);
    cleanup.defer(() => grpc.close());
    const metricsServer = await startMetricsServer(metrics.registry, config.GRPC_HOST, config.METRICS_PORT);
    cleanup.defer(() => metricsServer.close());
    grpc.setHealth("SERVING");
    log.info({ grpcPort, metricsPort: metricsServer.port, namespace: config.NAMESPACE }, "billing started");

    return { grpcPort, metricsPort: metricsServer.port, close: cleanup.close };
  });
}
