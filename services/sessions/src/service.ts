import { type BlobStore, createNatsBlobStore } from "@bas/blobs";
import { randomBytes, randomUUID } from "node:crypto";
import {
  createDb,
  createNatsEventStore,
  createProjectionRunner,
  ensureStreams,
  migrate,
  type EventConsumer,
  streamNames,
} from "@bas/event-store";
import { createEgressPolicy } from "@bas/egress-policy";
import {
  mailbox as mailboxProto,
  runs,
  SESSION_CHANGE_KINDS,
  type SessionChangeKind,
  sessions,
  webhooks,
  workspaces,
} from "@bas/proto";
import {
  connectNats,
  createGrpcServer,
  createLogger,
  createServiceMetrics,
  type Logger,
  startMetricsServer,
  startWithCleanup,
} from "@bas/service-kit";
import { sql } from "kysely";
import { messagesProjection, createMessageQueries } from "./adapters/pg/messages-projection";
import { createProjectLock, projectLockMigrations } from "./adapters/pg/project-lock";
import type { SessionsDb } from "./adapters/pg/schema";
import { createSecretsVault, secretsMigrations } from "./adapters/pg/secrets-vault";
import { createWebhookStore, webhookMigrations } from "./adapters/pg/webhook-store";
import { createWorkspaceStore, workspaceMigrations } from "./adapters/pg/workspace-store";
import { workspacesServer } from "./adapters/grpc/workspaces-server";
import { createWorkspaces } from "./app/workspaces";
import { createWebhookPoster, endpointRefusal } from "./adapters/http/webhook-post";
import { webhooksServer } from "./adapters/grpc/webhooks-server";
import { sessionBrowsersProjection } from "./adapters/pg/session-browsers-projection";
import { sessionCostsProjection } from "./adapters/pg/session-costs-projection";
import { createSessionQueries, sessionsProjection } from "./adapters/pg/sessions-projection";
import { runsProjection } from "./adapters/pg/runs-projection";
import { runCostsProjection } from "./adapters/pg/run-costs-projection";
import { createRunQueries } from "./adapters/pg/run-queries";
import { runsServer } from "./adapters/grpc/runs-server";
import { runnerReportsServer } from "./adapters/grpc/runner-reports-server";
import { sessionsServer } from "./adapters/grpc/sessions-server";
import { createWorkQueue } from "./adapters/nats/work-queue";
import { runBudgetReactor, sessionBudgetReactor } from "./adapters/nats/budget-reactor";
import { recordingReactor } from "./adapters/nats/recording-reactor";
import { createReopenLimit, createSessionHandler } from "./app/create-session";
import { dispatchReactor } from "./app/dispatch-reactor";
import { startInactivityReactor } from "./app/inactivity-reactor";
import type { ReadYourWrites } from "./app/ports";
import { createRunnerReports } from "./app/runner-reports";
import { createRuns } from "./app/runs";
import { createSessionCommands } from "./app/session-commands";
import { createSessionLifecycle } from "./app/session-lifecycle";
import { createSessionReads } from "./app/session-reads";
import { secretsCleanupReactor } from "./app/secrets-cleanup-reactor";
import { startHealthMonitor } from "./app/health-monitor";
import { startWebhookSender } from "./app/webhook-sender";
import { createWebhooks } from "./app/webhooks";
import { createLiveView } from "./app/live-view";
import { createLiveLinks } from "./adapters/crypto/live-links";
import { createMailboxQueries, mailboxProjection } from "./adapters/pg/mailbox-projection";
import { mailboxServer } from "./adapters/grpc/mailbox-server";
import { createMailboxMetrics } from "./adapters/prometheus/mailbox-metrics";
import { startSmtpReceiver } from "./adapters/smtp/smtp-receiver";
import { createMailbox } from "./app/mailbox";
import { mailboxAddress } from "./domain/mail";
import type { SessionsConfig } from "./config";

/** Connections of the create lock's own pool: creates of this many projects at once hold one each. */
const LOCK_CONNECTIONS = 8;

export interface SessionsServiceDeps {
  logger?: Logger;
  now?: () => Date;
  newId?: () => string;
  /** How long a projection's consumer waits for an ack before redelivery; short in tests. */
  ackWaitMs?: number;
  /** How long a command waits for the read models to include its events before answering from the aggregate. */
  readYourWritesTimeoutMs?: number;
  /** How often the health status is checked against real round trips to Postgres and NATS (default 1 s). */
  healthIntervalMs?: number;
  /** How often the webhook sender looks for due deliveries (default 250 ms). */
  webhookPollMs?: number;
  /** How often the SMTP receiver's certificate files are checked for a renewal (default 60 s). */
  smtpTlsCheckEveryMs?: number;
  /** How often released workspace blobs that are still there are deleted (default 60 s). */
  blobSweepMs?: number;
  /** How long an upload's blob waits for its commit before it is swept (default 1 h). */
  uploadGraceMs?: number;
  /** Wraps the blob store this service opens (tests make it fail for a while). */
  wrapBlobs?: (blobs: BlobStore) => BlobStore;
}

export interface SessionsService {
  grpcPort: number;
  /** Port of `/metrics`. */
  metricsPort: number;
  /** Port of the temporary mailboxes' SMTP receiver. */
  smtpPort: number;
  /** Empties the read models and replays the event stream into them; resolves once they have caught up. */
  rebuildReadModels(): Promise<void>;
  close(): Promise<void>;
}

/** Everything of the sessions service wired together: gRPC `Sessions` + `RunnerReports`, read models, reactors. */
export function startSessionsService(config: SessionsConfig, deps: SessionsServiceDeps = {}): Promise<SessionsService> {
  return startWithCleanup(async (cleanup) => {
    const log = deps.logger ?? createLogger("sessions", config.LOG_LEVEL);
    const now = deps.now ?? (() => new Date());
    const newId = deps.newId ?? randomUUID;
    const streams = streamNames(config.NAMESPACE);
    // What every service exports: process, gRPC latency and the lag of its projections and reactors.
    const metrics = createServiceMetrics("sessions");
    const nats = await connectNats(config.NATS_URL, "sessions");
    cleanup.defer(() => nats.nc.drain().catch(() => undefined));
    // A query that cannot get a connection fails (UNAVAILABLE) rather than hang its caller.
    const db = createDb<SessionsDb>(config.DATABASE_URL, { max: 20, connectionTimeoutMs: 5_000 });
    cleanup.defer(() => db.destroy());
    // The per-project create lock holds a connection while it waits: it gets a pool of its own, so a burst of
    // creates can never take the connections that reads and projections need.
    const lockDb = createDb<SessionsDb>(config.DATABASE_URL, { max: LOCK_CONNECTIONS, connectionTimeoutMs: 5_000 });
    cleanup.defer(() => lockDb.destroy());
    await ensureStreams(nats.jsm, streams, config.NATS_REPLICAS);
    await migrate(db, "sessions", {
      ...secretsMigrations,
      ...projectLockMigrations,
      ...webhookMigrations,
      ...workspaceMigrations,
    });

    const store = createNatsEventStore({ js: nats.js, jsm: nats.jsm, streams, now });
    const ownBlobs = await createNatsBlobStore({
      js: nats.js,
      namespace: config.NAMESPACE,
      replicas: config.NATS_REPLICAS,
    });
    cleanup.defer(() => ownBlobs.close());
    const blobs = deps.wrapBlobs?.(ownBlobs) ?? ownBlobs;
    // Once a session's rows are committed, say so (core NATS): gateways drop their cached copies and wake streams.
    const announce = (kind: SessionChangeKind) => (_: number, events: readonly { aggregateId: string }[]) => {
      for (const id of new Set(events.map((e) => e.aggregateId))) nats.nc.publish(streams.changes.subject(kind, id));
    };
    const runnerFor = (projection: EventConsumer, afterCommit?: ReturnType<typeof announce>) =>
      createProjectionRunner({
        ...nats,
        db,
        streams,
        projection,
        log,
        ackWaitMs: deps.ackWaitMs,
        afterCommit,
      });
    const views = runnerFor(sessionsProjection(), announce(SESSION_CHANGE_KINDS.view));
    const messages = runnerFor(messagesProjection(), announce(SESSION_CHANGE_KINDS.messages));
    const costs = runnerFor(sessionCostsProjection(), announce(SESSION_CHANGE_KINDS.view));
    const browsers = runnerFor(sessionBrowsersProjection());
    // Run events are pushed (SSE) as they are committed: the same notice wakes the gateways' event streams.
    const runViews = runnerFor(runsProjection(), announce(SESSION_CHANGE_KINDS.runs));
    const runCosts = runnerFor(runCostsProjection());
    // The mailbox read model says which addresses take mail: a create or a stop waits for it too (below).
    const mailboxes = runnerFor(mailboxProjection());
    const readModelRunners = [views, messages, costs, browsers, runViews, runCosts, mailboxes];
    const readYourWritesMs = deps.readYourWritesTimeoutMs ?? 5_000;
    const readYourWrites: ReadYourWrites = {
      async waitFor(sequence, timeoutMs) {
        try {
          const timeout = timeoutMs ?? readYourWritesMs;
          await Promise.all([views, messages, runViews, mailboxes].map((runner) => runner.waitFor(sequence, timeout)));
          return true;
        } catch (err) {
          log.warn({ err, sequence }, "read models lag behind; answering from the aggregate");
          return false;
        }
      },
    };

    const commands = createSessionCommands({ store, readModels: readYourWrites, now, newId, log });
    const queries = createSessionQueries(db, { now, finalCostsWaitMs: config.FINAL_COSTS_WAIT_MS });
    const runQueries = createRunQueries(db, { now, finalCostsWaitMs: config.FINAL_COSTS_WAIT_MS });
    const vault = createSecretsVault(db, config.SECRETS_KEY);
    const workQueue = createWorkQueue(nats.js, streams);
    const reactors = [
      runnerFor(dispatchReactor({ load: commands.load, publish: workQueue.publish })),
      runnerFor(secretsCleanupReactor(vault)),
      runnerFor(sessionBudgetReactor(commands, log)),
      runnerFor(runBudgetReactor(commands, runQueries.sessionOfRun, log)),
      runnerFor(recordingReactor(commands, log)),
    ];
    for (const runner of [...readModelRunners, ...reactors]) {
      cleanup.defer(() => runner.stop());
      await runner.start();
    }
    metrics.watchConsumers(
      nats.jsm,
      [...readModelRunners, ...reactors].map((runner) => runner.consumer),
    );
    const inactivity = startInactivityReactor({
      queries,
      commands,
      timeoutMs: config.SESSION_INACTIVITY_TIMEOUT_MS,
      now,
      log,
    });
    cleanup.defer(() => inactivity.stop());

    // Last set up, first closed: no new calls while the rest stops.
    const grpc = createGrpcServer({ onCall: metrics.grpcCall });
    const liveLinks = createLiveLinks(config.SECRETS_KEY, config.PUBLIC_URL);
    const createDeps = {
      commands,
      queries,
      vault,
      projectLock: createProjectLock({ db: lockDb, maxConnections: LOCK_CONNECTIONS, scope: "sessions-create" }),
      newId,
      liveLinks,
      maxActiveSessionsPerProject: config.MAX_ACTIVE_SESSIONS_PER_PROJECT,
      newInboxAddress: () => mailboxAddress(randomBytes(10).toString("hex"), config.MAIL_DOMAIN),
    };
    const create = createSessionHandler(createDeps);
    const liveView = createLiveView(commands, liveLinks);
    grpc.add(
      sessions.SessionsService,
      sessionsServer({
        create,
        lifecycle: createSessionLifecycle(commands, queries),
        reads: createSessionReads({
          queries,
          messageQueries: createMessageQueries(db),
          // Past the wait, the messages there are: a page a moment old rather than none.
          messagesReach: (version) =>
            messages.waitFor(version, readYourWritesMs).catch((err) => {
              log.warn({ err, version }, "the messages' read model lags behind; answering what it has");
            }),
          caughtUp: () => commands.readModelsCaughtUp(),
        }),
        liveView,
        log,
      }),
    );
    grpc.add(sessions.RunnerReportsService, runnerReportsServer(createRunnerReports(commands, vault), log));
    const mailbox = createMailbox({ commands, queries: createMailboxQueries(db) });
    grpc.add(mailboxProto.MailboxService, mailboxServer(mailbox, log));
    const withinLimitIfReopening = createReopenLimit(createDeps);
    const workspaceFiles = createWorkspaces({
      store: createWorkspaceStore(db, deps.uploadGraceMs),
      blobs,
      maxBytes: config.WORKSPACE_MAX_BYTES,
      maxPerProject: config.MAX_WORKSPACES_PER_PROJECT,
      newId,
      log,
    });
    grpc.add(workspaces.WorkspacesService, workspacesServer(workspaceFiles, log));
    const blobSweep = setInterval(() => {
      workspaceFiles.sweepReleasedBlobs().catch((err) => log.warn({ err }, "the sweep of released blobs failed"));
    }, deps.blobSweepMs ?? 60_000);
    blobSweep.unref();
    cleanup.defer(() => clearInterval(blobSweep));
    grpc.add(
      runs.RunsService,
      runsServer(
        createRuns({ create, withinLimitIfReopening, commands, queries: runQueries, workspaces: workspaceFiles }),
        log,
      ),
    );
    const webhookPolicy = createEgressPolicy({
      allow: config.WEBHOOK_EGRESS_ALLOW,
      deny: [],
      allowVariable: "WEBHOOK_EGRESS_ALLOW",
    });
    const webhookStore = createWebhookStore(db, config.SECRETS_KEY);
    grpc.add(
      webhooks.WebhooksService,
      webhooksServer(
        createWebhooks({ store: webhookStore, refusal: (url) => endpointRefusal(webhookPolicy, url) }),
        log,
      ),
    );
    const sender = startWebhookSender({
      store: webhookStore,
      post: createWebhookPoster(webhookPolicy, config.WEBHOOK_TIMEOUT_MS),
      retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
      retryMaxMs: config.WEBHOOK_RETRY_MAX_MS,
      retryForMs: config.WEBHOOK_RETRY_FOR_MS,
      pollMs: deps.webhookPollMs ?? 250,
      log,
    });
    cleanup.defer(() => sender.stop());
    const grpcPort = await grpc.listen(config.GRPC_HOST, config.GRPC_PORT);
    cleanup.defer(() => grpc.close());
    const metricsServer = await startMetricsServer(metrics.registry, config.GRPC_HOST, config.METRICS_PORT);
    cleanup.defer(() => metricsServer.close());
    const mailboxMetrics = createMailboxMetrics(metrics.registry);
    const smtp = await startSmtpReceiver({
      host: config.SMTP_HOST,
      port: config.SMTP_PORT,
      domain: config.MAIL_DOMAIN,
      maxBytes: config.SMTP_MAX_MESSAGE_BYTES,
      maxRecipients: 10,
      maxClients: 100,
      intake: mailbox,
      log,
      onReply: mailboxMetrics.reply,
      tls: config.smtpTls && { ...config.smtpTls, checkEveryMs: deps.smtpTlsCheckEveryMs },
    });
    cleanup.defer(() => smtp.close());
    const health = startHealthMonitor({
      probes: {
        database: () => sql`select 1`.execute(db),
        nats: () => nats.nc.flush(),
      },
      setServing: (serving) => grpc.setHealth(serving ? "SERVING" : "NOT_SERVING"),
      intervalMs: deps.healthIntervalMs ?? 1_000,
      timeoutMs: 2_000,
      log,
    });
    cleanup.defer(() => health.stop());
    await health.check();
    log.info({ grpcPort, metricsPort: metricsServer.port, smtpPort: smtp.port }, "sessions service ready");

    return {
      grpcPort,
      metricsPort: metricsServer.port,
      smtpPort: smtp.port,
      async rebuildReadModels() {
        for (const runner of readModelRunners) {
          await runner.rebuild();
          await runner.catchUp();
        }
      },
      async close() {
        await cleanup.close();
        log.info("sessions service stopped");
      },
    };
  });
}
