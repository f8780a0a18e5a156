import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { join } from "node:path";
import { type BlobStore, createNatsBlobStore } from "@bas/blobs";
import {
  createDb,
  createNatsEventStore,
  createProjectionRunner,
  ensureStreams,
  type EventConsumer,
  fold,
  lastSequence,
  migrate,
  streamNames,
} from "@bas/event-store";
import { browserDecider } from "./domain/decider";
import { BROWSER_AGGREGATE, type BrowserEvent } from "./domain/events";
import { browserPool as proto } from "@bas/proto";
import {
  connectNats,
  createGrpcServer,
  createLogger,
  type Logger,
  startMetricsServer,
  startWithCleanup,
} from "@bas/service-kit";
import { startCdpProxy } from "./adapters/cdp/cdp-proxy";
import { browserPoolServer } from "./adapters/grpc/browser-pool-server";
import { createContainerDriver } from "./adapters/container/container-driver";
import { createKubernetesDriver, loadKubeApi } from "./adapters/kubernetes/kubernetes-driver";
import { egressPortCount } from "./adapters/kubernetes/network-policy";
import { createNumberPool } from "./domain/number-pool";
import { isHeadlessShell } from "./adapters/local/chromium-args";
import { createLocalDriver } from "./adapters/local/local-driver";
import { checkSandboxTools } from "./adapters/local/sandbox";
import { createEgressPolicy, type EgressRule, parseEgressRules } from "@bas/egress-policy";
import type { ResolveHost } from "./adapters/network-proxy/network-proxy";
import { createUsagePublisher } from "./adapters/nats/usage-publisher";
import { browserCostsProjection } from "./adapters/pg/browser-costs-projection";
import { type BrowserPoolDb, browsersProjection, createBrowserReadModel } from "./adapters/pg/browsers-projection";
import { createUsageStore, usageMigrations } from "./adapters/pg/usage-store";
import { createNodeRegistry, nodeMigrations } from "./adapters/pg/node-registry";
import { admissionMigrations, createProjectAdmissions } from "./adapters/pg/project-admissions";
import { createProfileCreations, profileCreationMigrations } from "./adapters/pg/profile-creations";
import { createBrowserPoolMetrics } from "./adapters/prometheus/browser-pool-metrics";
import { createLauncher } from "./adapters/browser-launcher";
import { createFfmpegRecorder } from "./adapters/recording/ffmpeg-recorder";
import { createDownloadWatcher } from "./adapters/downloads/download-watcher";
import { createDownloadStore } from "./adapters/downloads/store-download";
import { createProfileQueries, createReleasedStates, profilesProjection } from "./adapters/pg/profiles-projection";
import { createKeptStates } from "./adapters/profiles/kept-states";
import { createProfileStates } from "./adapters/profiles/profile-states";
import { createProfiles } from "./app/profiles";
import { createBrowserPool } from "./app/browser-pool";
import { createLaunchHealth } from "./app/launch-health";
import { watchNodes } from "./app/lost-nodes";
import { recoverBrowsers } from "./app/recovery";
import { createSessionBrowsers } from "./app/session-browsers";
import { sessionEndReactor } from "./app/session-reactor";
import { watchForeignStops } from "./adapters/nats/foreign-stops";
import { watchEvents } from "./adapters/nats/watch-events";
import { dropCopiesOfDeletedProfiles } from "./app/deleted-profile-copies";
import { PROFILE_AGGREGATE } from "./domain/profile";
import { createUsageReporter } from "./app/usage-reporter";
import { createWarmPool } from "./app/warm-pool";
import { type BrowserPoolConfig, browserPodImage } from "./config";
import type { BrowserDriver } from "./domain/browser-driver";
import { recordingRefFor } from "./domain/recording";

export interface BrowserPoolServiceDeps {
  logger?: Logger;
  now?: () => Date;
  newId?: () => string;
  /** A driver built by the caller (tests hand in a Kubernetes driver pointed at a stand-in API server). */
  driver?: BrowserDriver;
  /** Wraps the driver this service uses (tests hold a launch back). */
  wrapDriver?: (driver: BrowserDriver) => BrowserDriver;
  ackWaitMs?: number;
  /** How often browser timeouts are checked (tests with a movable clock check often). */
  timeoutSweepMs?: number;
  /** Host name resolution for the egress proxies (tests give names addresses of their own). */
  resolve?: ResolveHost;
  /** How often released profile states still in the blob store are deleted (default 60 s). */
  profileStateSweepMs?: number;
  /** How long a profile's save may take to be recorded before it is swept as never recorded (default 1 h). */
  profileSaveGraceMs?: number;
  /** Wraps the blob store this service opens (tests make it fail for a while). */
  wrapBlobs?: (blobs: BlobStore) => BlobStore;
  /**
   * How long the warm pool waits to refill while idle browsers remain (default 1 s; tests that wait for it to be full
   * round after round have it start at once).
   */
  spareRefillDelayMs?: number;
}

export interface BrowserPoolService {
  grpcPort: number;
  /** Port of `/metrics`. */
  metricsPort: number;
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
      headlessShell: isHeadlessShell(config.CHROMIUM_PATH),
      root: config.BROWSER_DATA_DIR,
      users: config.RUNS_AS_ROOT
        ? createNumberPool({
            first: config.BROWSER_UID_BASE,
            count: config.MAX_BROWSERS_PER_NODE * 4,
            what: "browser user ids",
          })
        : undefined,
      noSandbox: !config.CHROMIUM_SANDBOX,
      isolatedServices: config.CHROMIUM_ISOLATED_SERVICES,
      gpuSandbox: config.CHROMIUM_GPU_SANDBOX,
      cdpRelay: config.CDP_RELAY_IN_SANDBOX,
      extraArgs: config.CHROMIUM_EXTRA_ARGS,
      locale: { LANG: config.LANG, ...(config.TZ ? { TZ: config.TZ } : {}) },
    });
  }
  if (config.BROWSER_DRIVER === "container") {
    return await createContainerDriver({
      engineSocket: config.CONTAINER_ENGINE_SOCKET,
      image: config.CONTAINER_BROWSER_IMAGE,
      root: config.BROWSER_DATA_DIR,
      nodeId: config.NODE_ID,
      deployment: config.NAMESPACE,
      limits: {
        memoryBytes: config.CONTAINER_BROWSER_MEMORY_MB * 1024 * 1024,
        pids: config.CONTAINER_BROWSER_PIDS,
        cpus: config.CONTAINER_BROWSER_CPUS,
      },
      locale: { LANG: config.LANG, ...(config.TZ ? { TZ: config.TZ } : {}) },
    });
  }
  return createKubernetesDriver({
    api: await loadKubeApi(),
    namespace: config.K8S_NAMESPACE,
    nodeId: config.NODE_ID,
    deployment: config.NAMESPACE,
    image: browserPodImage(config),
    devtoolsPort: config.K8S_DEVTOOLS_PORT,
    resources: { cpu: config.K8S_POD_CPU, memory: config.K8S_POD_MEMORY },
    proxyHost: config.K8S_PROXY_ADVERTISE_HOST ?? config.PROXY_HOST,
    proxyListenHost: config.PROXY_HOST,
    egressPorts: {
      first: config.K8S_EGRESS_PORT_BASE,
      count: egressPortCount(config.MAX_BROWSERS_PER_NODE, config.WARM_POOL_SIZE),
    },
    poolPodLabels: config.K8S_POOL_POD_LABELS,
    owner:
      config.K8S_OWNER_POD_NAME && config.K8S_OWNER_POD_UID
        ? { name: config.K8S_OWNER_POD_NAME, uid: config.K8S_OWNER_POD_UID }
        : undefined,
    readyTimeoutMs: config.K8S_READY_TIMEOUT_MS,
    placement: {
      nodeSelector: config.K8S_BROWSER_NODE_SELECTOR,
      tolerations: config.K8S_BROWSER_TOLERATIONS,
      runtimeClassName: config.K8S_BROWSER_RUNTIME_CLASS,
    },
    log,
  });
}

/**
 * The browser-pool service wired together: gRPC `BrowserPool`, the CDP proxy, the warm pool, the read models, the
 * session-end reactor and usage reports. Browsers of an earlier run of this node are adopted or recorded stopped
 * before anything new launches.
 */
export function startBrowserPoolService(
  config: BrowserPoolConfig,
  deps: BrowserPoolServiceDeps = {},
): Promise<BrowserPoolService> {
  return startWithCleanup(async (cleanup) => {
    const log = deps.logger ?? createLogger("browser-pool", config.LOG_LEVEL);
    const now = deps.now ?? (() => new Date());
    const newId = deps.newId ?? randomUUID;
    const streams = streamNames(config.NAMESPACE);
    const metrics = createBrowserPoolMetrics();
    const nats = await connectNats(config.NATS_URL, "browser-pool");
    cleanup.defer(() => nats.nc.drain().catch(() => undefined));
    const db = createDb<BrowserPoolDb>(config.DATABASE_URL, { max: 10 });
    cleanup.defer(() => db.destroy());

    await ensureStreams(nats.jsm, streams, config.NATS_REPLICAS);
    await migrate(db, "browser_pool", usageMigrations);
    await migrate(db, "browser_pool_nodes", nodeMigrations);
    await migrate(db, "browser_pool_admissions", admissionMigrations);
    await migrate(db, "browser_pool_profile_creations", profileCreationMigrations);
    const admissions = createProjectAdmissions(db, config.NODE_ID);
    const store = createNatsEventStore({ js: nats.js, jsm: nats.jsm, streams, now });
    const readModel = createBrowserReadModel(db);
    const runnerFor = (projection: EventConsumer) =>
      createProjectionRunner({ ...nats, db, streams, projection, log, ackWaitMs: deps.ackWaitMs });
    const browsersRunner = runnerFor(browsersProjection());
    const profilesRunner = runnerFor(profilesProjection());
    const readModelRunners = [browsersRunner, profilesRunner, runnerFor(browserCostsProjection())];
    // Stopped after the browsers: each stop waits for the read model to show it.
    cleanup.defer(async () => {
      for (const runner of readModelRunners) await runner.stop();
    });

    const ownDriver = deps.driver ?? (await createDriver(config, log));
    const driver = deps.wrapDriver?.(ownDriver) ?? ownDriver;
    cleanup.defer(() => driver.close());
    let state = () => ({});
    const cdp = await startCdpProxy({
      host: config.CDP_HOST,
      port: config.CDP_PORT,
      liveFrameAncestors: config.LIVE_VIEW_FRAME_ANCESTORS,
      health: () => state(),
      onRelayFailure: (failure) =>
        log.warn(
          failure,
          "a CDP relay into a browser's sandbox failed and its caller was disconnected; if relays may not enter " +
            "sandboxes' networks here (setns), set CDP_RELAY_IN_SANDBOX=false",
        ),
    });
    cleanup.defer(() => cdp.close());
    const cdpPublicUrl = config.CDP_PUBLIC_URL ?? `ws://${config.CDP_HOST}:${cdp.port}`;

    const usageStore = createUsageStore(db);
    const usage = createUsageReporter({
      store: usageStore,
      publish: createUsagePublisher(nats.js, streams),
      now,
      newId,
      log,
    });
    cleanup.defer(() => usage.stop());
    // Closed whatever is allowed; this node's gRPC and metrics ports join once they are bound.
    const closed = [...config.BROWSER_EGRESS_DENY, ...storeAddresses(config), ...anyAddressOn(cdp.port)];
    const egressPolicy = createEgressPolicy({ allow: config.BROWSER_EGRESS_ALLOW, deny: closed });
    const launchHealth = createLaunchHealth({
      // The local driver can tell up front that Chromium (or the sandbox's tools) is missing; a driver handed in
      // by the caller or pods on Kubernetes show it only in how their launches go.
      preflight:
        !deps.driver && config.BROWSER_DRIVER === "local" ? () => checkSandboxTools(config.CHROMIUM_PATH) : undefined,
      warm: () => ({ idle: warm.idle, size: config.WARM_POOL_SIZE }),
    });
    const launcher = launchHealth.watch(
      createLauncher({
        driver,
        proxyUpstreamTemplate: config.PROXY_UPSTREAM_URL,
        egressPolicy,
        resolve: deps.resolve,
      }),
    );
    const warm = createWarmPool({
      size: config.WARM_POOL_SIZE,
      // Filled once `pool` exists (`warm.start()` below).
      launch: async (id, window) => pool.watchingDownloads(await launcher.launchWarm(id, window)),
      newId,
      log,
      spareRefillDelayMs: deps.spareRefillDelayMs,
      resizes: driver.resizesWindows,
    });
    cleanup.defer(() => warm.close());
    const ownBlobs = await createNatsBlobStore({
      js: nats.js,
      namespace: config.NAMESPACE,
      replicas: config.NATS_REPLICAS,
    });
    cleanup.defer(() => ownBlobs.close());
    const blobs = deps.wrapBlobs?.(ownBlobs) ?? ownBlobs;
    const recorder = createFfmpegRecorder({
      ffmpegPath: config.FFMPEG_PATH,
      dir: join(config.BROWSER_DATA_DIR, ".recordings"),
      log,
    });
    const cannotRecord = recorder.problem();
    if (cannotRecord) log.warn({ ffmpegPath: config.FFMPEG_PATH }, cannotRecord);
    const releasedStates = createReleasedStates(db, deps.profileSaveGraceMs);
    const profileStates = createProfileStates(
      blobs,
      createKeptStates(join(config.BROWSER_DATA_DIR, ".profile-states")),
      releasedStates,
    );
    const profileQueries = createProfileQueries(db);
    const profiles = createProfiles({
      store,
      creations: createProfileCreations(db),
      maxPerProject: config.MAX_PROFILES_PER_PROJECT,
      states: profileStates,
      released: releasedStates,
      log,
      readModel: profileQueries,
      settle: (sequence) =>
        profilesRunner.waitFor(sequence, 5_000).catch((err) => log.warn({ err, sequence }, "read model lags behind")),
      // From the browser's events: a stop decided a moment ago, on this node or another, is read as such.
      isStopped: async (_projectId, browserId) => {
        const { events } = await store.load<BrowserEvent>({ type: BROWSER_AGGREGATE, id: browserId });
        return fold(browserDecider, events).status === "stopped";
      },
      now,
      newId,
    });
    const stateSweep = setInterval(() => {
      profiles.sweepReleasedStates().catch((err) => log.warn({ err }, "the sweep of released profile states failed"));
    }, deps.profileStateSweepMs ?? 60_000);
    stateSweep.unref();
    cleanup.defer(() => clearInterval(stateSweep));
    const pool = createBrowserPool({
      config: {
        nodeId: config.NODE_ID,
        cdpPublicUrl,
        limits: { perProject: config.MAX_BROWSERS_PER_PROJECT, perNode: config.MAX_BROWSERS_PER_NODE },
      },
      store,
      admissions,
      cdp,
      launcher,
      warm,
      usage,
      usageStore,
      recorder,
      storeRecording: (id, video) =>
        blobs.put(createReadStream(video.file), { contentType: "video/mp4", ref: recordingRefFor(id) }),
      downloads: createDownloadWatcher(log),
      storeDownload: createDownloadStore(blobs, config.MAX_DOWNLOAD_MB * 1024 * 1024),
      profiles,
      profileStates,
      settle: (sequence) =>
        browsersRunner.waitFor(sequence, 5_000).catch((err) => log.warn({ err, sequence }, "read model lags behind")),
      catchUp: () => browsersRunner.catchUp(2_000).catch((err) => log.warn({ err }, "read model lags behind")),
      stoppedAmong: (ids) => readModel.stoppedAmong(ids),
      timeoutSweepMs: deps.timeoutSweepMs,
      metrics,
      now,
      newId,
      log,
    });
    state = () => {
      const { canLaunch, problem } = launchHealth.report();
      return { nodeId: config.NODE_ID, browsers: pool.running().length, warmIdle: warm.idle, canLaunch, problem };
    };
    cleanup.defer(() => (config.STOP_BROWSERS_ON_SHUTDOWN ? pool.stopAll() : pool.detachAll()));

    for (const runner of readModelRunners) await runner.start();
    await browsersRunner.catchUp();
    // Alive before recovering: a node back after a long while is no longer taken for gone.
    const nodes = await watchNodes({
      nodes: createNodeRegistry(db),
      readModel,
      nodeId: config.NODE_ID,
      lostAfterMs: config.NODE_LOST_AFTER_SECONDS * 1000,
      usage,
      pool,
      now,
      log,
    });
    cleanup.defer(() => nodes.stop());
    await admissions.forgetNode();
    // Before recovering: a stop recorded elsewhere while this node adopts its browsers is still heard.
    const stopsAfter = await lastSequence(nats.jsm, streams.events.stream);
    await recoverBrowsers({ readModel, nodeId: config.NODE_ID, driver, launcher, pool, usage, now, log });
    await usage.flush();
    usage.start(config.USAGE_INTERVAL_MS);
    warm.start();

    const sessionBrowsers = createSessionBrowsers({
      pool,
      readModel,
      cdpInternalUrl: config.CDP_INTERNAL_URL ?? cdpPublicUrl,
      timeoutMinutes: config.SESSION_BROWSER_TIMEOUT_MINUTES,
    });
    const sessionEnds = runnerFor(sessionEndReactor(sessionBrowsers));
    cleanup.defer(() => sessionEnds.stop());
    await sessionEnds.start();
    const followDeps = { ...nats, log };
    const foreignStops = await watchForeignStops(followDeps, streams, pool, stopsAfter);
    cleanup.defer(() => foreignStops.close());
    await profilesRunner.catchUp();
    const deletedProfiles = await dropCopiesOfDeletedProfiles({
      states: profileStates,
      live: profileQueries.live,
      watchDeletions: (deleted) => watchEvents(followDeps, streams, PROFILE_AGGREGATE, ["ProfileDeleted"], deleted),
      log,
    });
    cleanup.defer(() => deletedProfiles.close());
    metrics.watchConsumers(
      nats.jsm,
      [...readModelRunners, sessionEnds].map((runner) => runner.consumer),
    );
    metrics.observeNode({
      nodeId: config.NODE_ID,
      active: () => pool.running().length,
      warmIdle: () => warm.idle,
      warmTarget: config.WARM_POOL_SIZE,
      cdp: cdp.traffic,
    });

    // Last set up, first closed: no new calls while the rest stops.
    const grpc = createGrpcServer({ onCall: metrics.grpcCall });
    grpc.add(
      proto.BrowserPoolService,
      browserPoolServer({
        pool,
        sessions: sessionBrowsers,
        readModel,
        profiles,
        launchHealth: launchHealth.report,
        log,
      }),
    );
    const grpcPort = await grpc.listen(config.GRPC_HOST, config.GRPC_PORT);
    closed.push(...anyAddressOn(grpcPort));
    cleanup.defer(() => grpc.close());
    const metricsServer = await startMetricsServer(metrics.registry, config.GRPC_HOST, config.METRICS_PORT);
    closed.push(...anyAddressOn(metricsServer.port));
    cleanup.defer(() => metricsServer.close());
    grpc.setHealth("SERVING");
    log.info(
      { grpcPort, metricsPort: metricsServer.port, cdpPort: cdp.port, nodeId: config.NODE_ID, driver: driver.name },
      "browser-pool ready",
    );

    return {
      grpcPort,
      metricsPort: metricsServer.port,
      cdpPort: cdp.port,
      cdpPublicUrl,
      nodeId: config.NODE_ID,
      warmPoolFilled: (timeoutMs) => warm.filled(timeoutMs),
      liveBrowserIds: () => pool.running(),
      async close() {
        await cleanup.close();
        log.info("browser-pool stopped");
      },
    };
  });
}

/** Any address on `port`: a port of this node's own, on whichever interface a browser would try it. */
const anyAddressOn = (port: number): EgressRule[] => [
  { network: "0.0.0.0", prefix: 0, family: "ipv4", port },
  { network: "::", prefix: 0, family: "ipv6", port },
];

/**
 * The NATS and Postgres this node uses, which a browser must never reach whatever BROWSER_EGRESS_ALLOW opens (when
 * given by address; a name is closed by the default ranges unless an operator opens its range).
 */
function storeAddresses(config: BrowserPoolConfig): EgressRule[] {
  return [
    [config.NATS_URL, 4222],
    [config.DATABASE_URL, 5432],
  ].flatMap(([url, defaultPort]) => {
    const { hostname, port } = new URL(String(url));
    try {
      return parseEgressRules(`${hostname.replace(/^localhost$/, "127.0.0.1")}:${port || defaultPort}`);
    } catch {
      return [];
    }
  });
}
