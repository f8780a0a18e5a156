import { randomUUID } from "node:crypto";
import {
  createDb,
  createNatsEventStore,
  createProjectionRunner,
  ensureStreams,
  migrate,
  type Projection,
  type ProjectionRunner,
  streamNames,
} from "@bas/event-store";
import { browserPool as proto } from "@bas/proto";
import { connectNats, createGrpcServer, createLogger, type Logger } from "@bas/service-kit";
import { startCdpProxy } from "./adapters/cdp/cdp-proxy";
import { browserPoolServer } from "./adapters/grpc/browser-pool-server";
import { createKubernetesDriver, loadKubeApi } from "./adapters/kubernetes/kubernetes-driver";
import { createLocalDriver } from "./adapters/local/local-driver";
import { createUsagePublisher } from "./adapters/nats/usage-publisher";
import { browserCostsProjection } from "./adapters/pg/browser-costs-projection";
import { type BrowserPoolDb, browsersProjection } from "./adapters/pg/browsers-projection";
import { createUsageStore, usageMigrations } from "./adapters/pg/usage-store";
import { createLauncher } from "./app/browser-launcher";
import { createBrowserPool } from "./app/browser-pool";
import { recoverBrowsers } from "./app/recovery";
import { createSessionBrowsers } from "./app/session-browsers";
import { sessionEndReactor } from "./app/session-reactor";
import { watchForeignStops } from "./app/stop-watcher";
import { createUsageReporter } from "./app/usage-reporter";
import { createWarmPool } from "./app/warm-pool";
import type { BrowserPoolConfig } from "./config";
import type { BrowserDriver } from "./domain/browser-driver";
import { BROWSER_AGGREGATE } from "./domain/browser-events";
import { WARM_SETTINGS } from "./domain/browser-settings";

export interface BrowserPoolServiceDeps {
  logger?: Logger;
  now?: () => Date;
  newId?: () => string;
  /** A driver built by the caller (tests hand in a Kubernetes driver pointed at a stand-in API server). */
  driver?: BrowserDriver;
  ackWaitMs?: number;
  /** How often browser timeouts are checked (tests with a movable clock check often). */
  timeoutSweepMs?: number;
}

export interface BrowserPoolService {
  grpcPort: number;
  cdpPort: number;
  /** Base of the cdpUrls this node hands out. */
  cdpPublicUrl: string;
  nodeId: string;
  /** Resolves when the warm pool holds WARM_POOL_SIZE idle browsers (tests, benchmarks). */
  warmPoolFilled(timeoutMs?: number): Promise<void>;
  /** The browsers this node serves right now. */
  liveBrowserIds(): string[];
  close(): Promise<void>;
}

async function createDriver(config: BrowserPoolConfig, log: Logger): Promise<BrowserDriver> {
  if (config.BROWSER_DRIVER === "local") {
    return createLocalDriver({
      chromiumPath: config.CHROMIUM_PATH,
      root: config.BROWSER_DATA_DIR,
      noSandbox: config.CHROMIUM_NO_SANDBOX,
      extraArgs: config.CHROMIUM_EXTRA_ARGS,
    });
  }
  return createKubernetesDriver({
    api: await loadKubeApi(),
    namespace: config.K8S_NAMESPACE,
    nodeId: config.NODE_ID,
    deployment: config.NAMESPACE,
    image: config.K8S_BROWSER_IMAGE,
    devtoolsPort: config.K8S_DEVTOOLS_PORT,
    resources: { cpu: config.K8S_POD_CPU, memory: config.K8S_POD_MEMORY },
    proxyHost: config.K8S_PROXY_ADVERTISE_HOST ?? config.PROXY_HOST,
    owner:
      config.K8S_OWNER_POD_NAME && config.K8S_OWNER_POD_UID
        ? { name: config.K8S_OWNER_POD_NAME, uid: config.K8S_OWNER_POD_UID }
        : undefined,
    readyTimeoutMs: config.K8S_READY_TIMEOUT_MS,
    log,
  });
}

/**
 * The browser-pool service wired together: gRPC `BrowserPool`, the CDP proxy, the warm pool, the read models, the
 * session-end reactor and usage reports. Browsers of an earlier run of this node are adopted or recorded stopped
 * before anything new launches.
 */
export async function startBrowserPoolService(
  config: BrowserPoolConfig,
  deps: BrowserPoolServiceDeps = {},
): Promise<BrowserPoolService> {
  const log = deps.logger ?? createLogger("browser-pool", config.LOG_LEVEL);
  const now = deps.now ?? (() => new Date());
  const newId = deps.newId ?? randomUUID;
  const streams = streamNames(config.NAMESPACE);
  const nats = await connectNats(config.NATS_URL, "browser-pool");
  const db = createDb<BrowserPoolDb>(config.DATABASE_URL, { max: 10 });
  const cleanups: Array<() => Promise<unknown>> = [];
  const closeAll = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  cleanups.push(
    () => db.destroy(),
    () => nats.nc.drain(),
  );

  try {
    await ensureStreams(nats.jsm, streams);
    await migrate(db, "browser_pool", usageMigrations);
    const store = createNatsEventStore({ js: nats.js, jsm: nats.jsm, streams, now });
    const runnerFor = (projection: Projection) =>
      createProjectionRunner({ js: nats.js, jsm: nats.jsm, db, streams, projection, log, ackWaitMs: deps.ackWaitMs });
    const browsersRunner = runnerFor(browsersProjection());
    const runners: ProjectionRunner[] = [browsersRunner, runnerFor(browserCostsProjection())];
    cleanups.push(async () => {
      for (const runner of runners) await runner.stop();
    });

    const driver = deps.driver ?? (await createDriver(config, log));
    cleanups.push(() => driver.close());
    let state = () => ({});
    const cdp = await startCdpProxy({ host: config.CDP_HOST, port: config.CDP_PORT, health: () => state() });
    cleanups.push(() => cdp.close());
    const cdpPublicUrl = config.CDP_PUBLIC_URL ?? `ws://${config.CDP_HOST}:${cdp.port}`;

    const usageStore = createUsageStore(db);
    const usage = createUsageReporter({
      store: usageStore,
      publish: createUsagePublisher(nats.js, streams),
      now,
      newId,
      log,
    });
    cleanups.push(() => usage.stop());
    const launcher = createLauncher({
      driver,
      proxyHost: config.PROXY_HOST,
      proxyUpstreamTemplate: config.PROXY_UPSTREAM_URL,
    });
    const warm = createWarmPool({
      size: config.WARM_POOL_SIZE,
      launch: (id) => launcher.launch(id, WARM_SETTINGS),
      newId,
      log,
    });
    cleanups.push(() => warm.close());
    const pool = createBrowserPool({
      config: {
        nodeId: config.NODE_ID,
        cdpPublicUrl,
        limits: { perProject: config.MAX_BROWSERS_PER_PROJECT, perNode: config.MAX_BROWSERS_PER_NODE },
      },
      store,
      db,
      cdp,
      launcher,
      warm,
      usage,
      usageStore,
      settle: (sequence) =>
        browsersRunner.waitFor(sequence, 5_000).catch((err) => log.warn({ err, sequence }, "read model lags behind")),
      timeoutSweepMs: deps.timeoutSweepMs,
      now,
      newId,
      log,
    });
    state = () => ({ nodeId: config.NODE_ID, browsers: pool.live.size, warmIdle: warm.idle });
    cleanups.push(() => (config.STOP_BROWSERS_ON_SHUTDOWN ? pool.stopAll() : pool.detachAll()));

    for (const runner of runners) await runner.start();
    const lastBrowserEvent = await nats.jsm.streams
      .getMessage(streams.events.stream, { last_by_subj: streams.events.ofType(BROWSER_AGGREGATE) })
      .catch(() => null);
    if (lastBrowserEvent) await browsersRunner.waitFor(lastBrowserEvent.seq, 60_000);
    await recoverBrowsers({ db, nodeId: config.NODE_ID, driver, launcher, pool, log });
    await usage.flush();
    usage.start(config.USAGE_INTERVAL_MS);
    warm.start();

    const sessionBrowsers = createSessionBrowsers({
      pool,
      db,
      cdpInternalUrl: config.CDP_INTERNAL_URL ?? cdpPublicUrl,
      timeoutMinutes: config.SESSION_BROWSER_TIMEOUT_MINUTES,
    });
    const sessionEnds = runnerFor(sessionEndReactor(sessionBrowsers));
    runners.push(sessionEnds);
    await sessionEnds.start();
    const foreignStops = watchForeignStops(nats.nc, streams, pool);
    cleanups.push(async () => foreignStops.close());

    const grpc = createGrpcServer();
    grpc.add(proto.BrowserPoolService, browserPoolServer({ pool, sessions: sessionBrowsers, db, log }));
    const grpcPort = await grpc.listen(config.GRPC_HOST, config.GRPC_PORT);
    cleanups.push(() => grpc.close());
    grpc.setHealth("SERVING");
    log.info({ grpcPort, cdpPort: cdp.port, nodeId: config.NODE_ID, driver: driver.name }, "browser-pool ready");

    let closing: Promise<void> | undefined;
    return {
      grpcPort,
      cdpPort: cdp.port,
      cdpPublicUrl,
      nodeId: config.NODE_ID,
      warmPoolFilled: (timeoutMs) => warm.filled(timeoutMs),
      liveBrowserIds: () => pool.live.ids(),
      close() {
        closing ??= closeAll().then(() => log.info("browser-pool stopped"));
        return closing;
      },
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
