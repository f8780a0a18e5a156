import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { createNatsBlobStore } from "@bas/blobs";
import { createDb, ensureStreams, migrate, streamNames } from "@bas/event-store";
import { loadModelCatalog } from "@bas/models";
import { runner } from "@bas/proto";
import { checkSandboxTools } from "@bas/embedded-infra";
import {
  connectNats,
  createGrpcServer,
  createLogger,
  type Logger,
  startMetricsServer,
  startWithCleanup,
} from "@bas/service-kit";
import { CdpBrowserDriver } from "./adapters/cdp/cdp-browser-driver";
import { createKeyCipher } from "./adapters/crypto/key-cipher";
import { connectBilling } from "./adapters/grpc/billing-budget";
import { connectBrowserPool } from "./adapters/grpc/browser-pool-client";
import { runnerServer } from "./adapters/grpc/runner-server";
import { connectSessionReports } from "./adapters/grpc/session-reports";
import { connectMailbox } from "./adapters/grpc/mailbox-client";
import { createMailboxTools } from "./app/mailbox-tools";
import { connectWorkspaceFiles } from "./adapters/grpc/workspace-files";
import { createWorkspaceTools } from "./app/workspace-tools";
import { watchSession } from "./adapters/nats/session-signals";
import { createTaskLeases } from "./adapters/nats/task-leases";
import { createUsagePublisher } from "./adapters/nats/usage-publisher";
import { startWorkConsumer } from "./adapters/nats/work-consumer";
import { runScript } from "./adapters/node/script-runner";
import { OpenAiChat } from "./adapters/openai/openai-chat";
import { createProviderKeys, providerKeyMigrations, type RunnerDb } from "./adapters/pg/provider-keys";
import { createRunnerMetrics } from "./adapters/prometheus/runner-metrics";
import type { OutagePolicy } from "./app/ports";
import { type RunningTask, type TaskWorkerDeps, workTask } from "./app/task-worker";
import type { RunnerConfig } from "./config";
import { createRouteTable } from "./domain/model-routes";

export interface RunnerServiceDeps {
  logger?: Logger;
  now?: () => Date;
  /** Names this process in leases and logs. */
  runnerId?: string;
}

export interface RunnerService {
  grpcPort: number;
  /** Port of `/metrics`. */
  metricsPort: number;
  /** Tasks this process works right now. */
  status(): { activeTasks: number; sessionIds: string[] };
  /** Stops taking tasks, hands the ones in flight back to the queue (another runner continues them), disconnects. */
  close(): Promise<void>;
}

/** Code-mode scripts run only sandboxed (bubblewrap, with socat bridging them to the task's browser). */
function canSandboxScripts(): boolean {
  try {
    checkSandboxTools();
    return true;
  } catch {
    return false;
  }
}

/** The runner wired together: the work-queue consumer running the agent, and the operator gRPC API. */
export function startRunnerService(config: RunnerConfig, deps: RunnerServiceDeps = {}): Promise<RunnerService> {
  return startWithCleanup(async (cleanup) => {
    const log = deps.logger ?? createLogger("runner", config.LOG_LEVEL);
    const now = deps.now ?? (() => new Date());
    const runnerId = deps.runnerId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    const streams = streamNames(config.NAMESPACE);
    const metrics = createRunnerMetrics();

    const nats = await connectNats(config.NATS_URL, `runner-${runnerId}`);
    cleanup.defer(() => nats.nc.drain().catch(() => undefined));
    await ensureStreams(nats.jsm, streams, config.NATS_REPLICAS);
    const db = createDb<RunnerDb>(config.DATABASE_URL, { max: 4 });
    cleanup.defer(() => db.destroy());
    await migrate(db, "runner", providerKeyMigrations);
    const keys = createProviderKeys(
      db,
      config.PROVIDER_KEY_SECRET ? createKeyCipher(config.PROVIDER_KEY_SECRET) : undefined,
      now,
    );
    const catalog = loadModelCatalog(config.MODEL_CATALOG);
    const routes = createRouteTable({
      ...(config.LLM_BASE_URL ? { baseUrl: config.LLM_BASE_URL } : {}),
      ...(config.LLM_API_KEY ? { apiKey: config.LLM_API_KEY } : {}),
      ...(config.LLM_MODEL ? { defaultModel: config.LLM_MODEL } : {}),
      overrides: config.MODEL_ROUTES,
      canonical: (m) => catalog.canonical(m),
    });
    const outage: OutagePolicy = {
      graceMs: config.OUTAGE_GRACE_SECONDS * 1_000,
      onWait: (dependency, err, waitedMs) =>
        log.warn({ dependency, waitedMs, why: (err as Error)?.message }, `waiting for ${dependency} to answer`),
    };
    const reports = connectSessionReports(config.SESSIONS_ADDR, outage);
    const browsers = connectBrowserPool(config.BROWSER_POOL_ADDR, config.BROWSER_POOL_REPLICAS);
    const billing = config.BILLING_ADDR ? connectBilling(config.BILLING_ADDR, outage) : undefined;
    cleanup.defer(() => {
      reports.close();
      browsers.close();
      billing?.close();
    });
    const leases = await createTaskLeases(nats.js, config.NAMESPACE, config.NATS_REPLICAS);
    const usage = createUsagePublisher(nats.js, streams, outage, now);
    // Workspace files are blobs; step screenshots are too, when they are kept.
    const blobs = await createNatsBlobStore({
      js: nats.js,
      namespace: config.NAMESPACE,
      replicas: config.NATS_REPLICAS,
    });
    cleanup.defer(() => blobs.close());
    const screenshots = config.STEP_SCREENSHOTS ? blobs : undefined;
    const workspaceFiles = connectWorkspaceFiles(config.SESSIONS_ADDR, blobs, outage);
    cleanup.defer(() => workspaceFiles.close());
    const mailbox = connectMailbox(config.SESSIONS_ADDR, outage);
    cleanup.defer(() => mailbox.close());
    const chat = new OpenAiChat({ timeoutMs: config.LLM_TIMEOUT_MS, maxRetries: config.LLM_MAX_RETRIES });
    if (!canSandboxScripts()) {
      log.warn(
        {},
        "bwrap or socat not found (apt-get install bubblewrap socat): code-mode scripts are returned without being run",
      );
    }
    if (!billing) log.warn({}, "BILLING_ADDR is not set: model calls are made without budget checks");

    const running = new Map<string, RunningTask>();
    const workerDeps: TaskWorkerDeps = {
      runnerId,
      reports,
      acquireBrowser: (a, settings) => browsers.acquire(a.projectId, a.sessionId, settings, a.reopened === true),
      connectBrowser: (cdpUrl) => CdpBrowserDriver.connect(cdpUrl),
      claimLease: (taskId, attempt) => leases.claim(taskId, { runnerId, attempt }),
      watchSession: (sessionId, taskId, onStop) => {
        const watch = watchSession({ ...nats, log }, streams, sessionId, taskId, onStop);
        return () => watch.close();
      },
      resolveRoute: (model) => routes.resolve(model),
      ownKey: (projectId, provider) => keys.get(projectId, provider),
      complete: (target, request) => chat.complete(target, request),
      ...(billing
        ? {
            checkBudget: (a, estimate) =>
              billing.check({
                projectId: a.projectId,
                sessionId: a.sessionId,
                taskId: a.taskId,
                ...(a.runId ? { runId: a.runId } : {}),
                ...(a.maxCostUsd ? { maxCostUsd: a.maxCostUsd } : {}),
                model: a.model,
                ownKey: a.useOwnKey,
                estimatedInputTokens: estimate.inputTokens,
                estimatedOutputTokens: estimate.outputTokens,
              }),
          }
        : {}),
      publishUsage: (a, u) =>
        usage.publishLlm({
          id: u.id,
          ...(u.occurredAt ? { occurredAt: u.occurredAt } : {}),
          projectId: a.projectId,
          sessionId: a.sessionId,
          ...(a.runId ? { runId: a.runId } : {}),
          model: a.model,
          inputTokens: u.inputTokens,
          outputTokens: u.outputTokens,
          ownKey: a.useOwnKey,
        }),
      ...(screenshots
        ? { storeScreenshot: (ref, jpeg) => screenshots.put(jpeg, { contentType: "image/jpeg", ref }) }
        : {}),
      workspaceTools: (a) =>
        a.workspaceId ? createWorkspaceTools(workspaceFiles.files(a.projectId, a.workspaceId)) : undefined,
      mailboxTools: (a) =>
        a.inboxEmail
          ? createMailboxTools({ reader: mailbox, sessionId: a.sessionId, address: a.inboxEmail })
          : undefined,
      ...(canSandboxScripts()
        ? {
            runScript: (code, env, browserWsEndpoint) =>
              runScript(code, env, {
                browserWsEndpoint,
                timeoutMs: config.CODE_MODE_TIMEOUT_MS,
                uid: process.getuid?.() === 0 ? config.CODE_MODE_UID : undefined,
              }),
          }
        : {}),
      log,
      now,
      maxSteps: config.MAX_STEPS,
      maxAttempts: config.MAX_ATTEMPTS,
      outage,
      agent: {
        maxObserveChars: config.OBSERVE_MAX_CHARS,
        extractMaxChars: config.OBSERVE_MAX_CHARS * 3,
        schemaRetries: config.SCHEMA_RETRIES,
        screenshots: !!screenshots,
      },
      metrics,
    };
    const status = () => ({
      activeTasks: running.size,
      sessionIds: [...new Set([...running.values()].map((t) => t.assignment.sessionId))],
    });

    const grpc = createGrpcServer({ onCall: metrics.grpcCall });
    grpc.add(runner.RunnerService, runnerServer({ status, keys, routes, log }));
    const grpcPort = await grpc.listen(config.GRPC_HOST, config.GRPC_PORT);
    cleanup.defer(() => grpc.close());
    const metricsServer = await startMetricsServer(metrics.registry, config.GRPC_HOST, config.METRICS_PORT);
    cleanup.defer(() => metricsServer.close());

    const consumer = await startWorkConsumer(
      {
        js: nats.js,
        jsm: nats.jsm,
        streams,
        concurrency: config.RUNNER_CONCURRENCY,
        ackWaitMs: config.TASK_ACK_WAIT_MS,
        maxDeliver: config.MAX_ATTEMPTS + 1,
        log,
      },
      (item) =>
        workTask(item.assignment, item.attempt, workerDeps, (task) => {
          running.set(task.assignment.taskId, task);
          return () => running.delete(task.assignment.taskId);
        }),
    );
    // First undone: stop taking tasks and hand the ones in flight back to the queue (another runner continues them).
    cleanup.defer(async () => {
      grpc.setHealth("NOT_SERVING");
      const stopped = consumer.stop();
      for (const task of running.values()) task.interrupt("handback");
      // A task stuck in a browser call must not hold the shutdown: unacknowledged, it is redelivered anyway.
      await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
    });
    const queue = consumer.consumer;
    metrics.watchConsumers(nats.jsm, [queue]);
    metrics.countTasks({
      running: () => running.size,
      queued: async () => (await nats.jsm.consumers.info(queue.stream, queue.name)).num_pending,
    });
    grpc.setHealth("SERVING");
    log.info(
      { grpcPort, metricsPort: metricsServer.port, runnerId, concurrency: config.RUNNER_CONCURRENCY },
      "runner started",
    );

    return {
      grpcPort,
      metricsPort: metricsServer.port,
      status,
      async close() {
        await cleanup.close();
        log.info({ runnerId }, "runner stopped");
      },
    };
  });
}
