import { randomBytes } from "node:crypto";
import { type BlobStore, createBlobUrlSigner, createNatsBlobStore, createUploadUrlSigner } from "@bas/blobs";
import { createDb, createNatsEventStore, createPool, ensureStreams, migrate, streamNames } from "@bas/event-store";
import { loadModelCatalog } from "@bas/models";
import { gateway, SESSION_CHANGE_KINDS, type sessions } from "@bas/proto";
import {
  checkGrpcHealth,
  connectNats,
  createGrpcServer,
  createLogger,
  startMetricsServer,
  startWithCleanup,
} from "@bas/service-kit";
import { sql } from "kysely";
import { browserLaunchProblem } from "./adapters/grpc/browser-launch-problem";
import { createServiceClients } from "./adapters/grpc/clients";
import { createBrowserCapacityCheck } from "./app/browser-capacity-check";
import { projectAdminServer } from "./adapters/grpc/project-admin-server";
import { startHttpServer } from "./adapters/http/http-server";
import { createGatewayMetrics } from "./adapters/prometheus/gateway-metrics";
import { migrations } from "./adapters/pg/migrations";
import { createPgProjectStore } from "./adapters/pg/pg-project-store";
import { startRevocationListener } from "./adapters/pg/revocation-listener";
import type { GatewayDatabase } from "./adapters/pg/schema";
import { createAuthenticator } from "./app/authenticator";
import { createCreditCheck } from "./app/credit-check";
import { createModelRouteCheck } from "./app/model-route-check";
import { createOwnKeyCheck } from "./app/own-key-check";
import { createHealthCheck } from "./app/health";
import { createProjectAdmin } from "./app/project-admin";
import { createChangeNotices } from "./app/change-notices";
import { createReadCache } from "./app/read-cache";
import type { GatewayConfig } from "./config";
import { createHttpApp } from "./http/create-app";
import { createProjectRateLimit } from "./http/rate-limit";
import type { GatewayDeps } from "./http/gateway-deps";
import { buildOpenApiDocument } from "./http/openapi";
import { API_DOCUMENTS, type ApiVersion, apiVersionOf } from "./http/api-versions";
import type { AnyRoute } from "./http/route";
import * as registered from "./routes";

export interface GatewayService {
  /** The REST API's port. */
  port: number;
  /** The ProjectAdmin gRPC port. */
  grpcPort: number;
  /** Port of `/metrics`. */
  metricsPort: number;
  publicUrl: string;
  close(): Promise<void>;
}

export const ROUTES: readonly AnyRoute[] = Object.values(registered) as AnyRoute[];

/** Starts the REST gateway and its ProjectAdmin gRPC service, everything wired; used by main.ts and tests. */
export interface GatewayServiceDeps {
  /** Wraps the blob store this service opens (tests make it fail for a while). */
  wrapBlobs?: (blobs: BlobStore) => BlobStore;
}

export function startGatewayService(
  config: GatewayConfig,
  serviceDeps: GatewayServiceDeps = {},
): Promise<GatewayService> {
  return startWithCleanup(async (cleanup) => {
    const log = createLogger("gateway", config.LOG_LEVEL);
    const metrics = createGatewayMetrics();
    const nats = await connectNats(config.NATS_URL, "gateway");
    cleanup.defer(() => nats.nc.drain().catch(() => undefined));
    const streams = streamNames(config.NAMESPACE);
    await ensureStreams(nats.jsm, streams, config.NATS_REPLICAS);
    const eventStore = createNatsEventStore({ js: nats.js, jsm: nats.jsm, streams });
    // One pool for the gateway's queries and the rate limit's counts (rate-limiter-flexible takes a pg pool).
    const pool = createPool(config.DATABASE_URL);
    const db = createDb<GatewayDatabase>(pool);
    cleanup.defer(() => db.destroy());
    await migrate(db, "gateway", migrations);

    const store = createPgProjectStore(db);
    const authenticator = createAuthenticator({ store, ttlMs: config.API_KEY_CACHE_TTL_MS });
    const admin = createProjectAdmin({ store, onRevoked: authenticator.forget });
    if (config.BOOTSTRAP_API_KEY) await admin.ensureBootstrapKey(config.BOOTSTRAP_API_KEY);
    const revocations = await startRevocationListener({
      connectionString: config.DATABASE_URL,
      onRevoked: authenticator.forget,
      onResync: authenticator.forgetAll,
      log,
    });
    cleanup.defer(() => revocations.close());
    const ownBlobs = await createNatsBlobStore({
      js: nats.js,
      namespace: config.NAMESPACE,
      replicas: config.NATS_REPLICAS,
    });
    cleanup.defer(() => ownBlobs.close());
    const blobs = serviceDeps.wrapBlobs?.(ownBlobs) ?? ownBlobs;
    const clients = createServiceClients(
      {
        sessions: config.SESSIONS_ADDR,
        browserPool: config.BROWSER_POOL_ADDR,
        billing: config.BILLING_ADDR,
        runner: config.RUNNER_ADDR,
      },
      config.GRPC_DEADLINE_MS,
    );
    cleanup.defer(() => clients.close());
    const health = createHealthCheck({
      services: {
        sessions: config.SESSIONS_ADDR,
        browserPool: config.BROWSER_POOL_ADDR,
        runner: config.RUNNER_ADDR,
        billing: config.BILLING_ADDR,
      },
      checkService: (address) => checkGrpcHealth(address),
      capabilities: { browserPool: () => browserLaunchProblem(clients.browserPool, 2_000) },
      probes: {
        eventStore: () => eventStore.checkWritable(),
        database: async () => {
          await sql`select 1`.execute(db);
        },
      },
    });

    // Listening from here on, and first closed: no new requests while the rest stops.
    const http = await startHttpServer(config.PORT, config.HOST);
    cleanup.defer(() => http.close());
    const publicUrl = config.PUBLIC_URL ?? `http://127.0.0.1:${http.port}`;
    if (!config.BLOB_SIGNING_KEY)
      log.warn({}, "BLOB_SIGNING_KEY is not set: presigned URLs work only on this replica until it restarts");
    const signingKey = config.BLOB_SIGNING_KEY ?? randomBytes(32).toString("base64url");
    const urls = createBlobUrlSigner({ key: signingKey, baseUrl: publicUrl });
    const uploads = createUploadUrlSigner({ key: signingKey, baseUrl: publicUrl });
    const cacheOptions = { nc: nats.nc, streams, ttlMs: config.SESSION_CACHE_TTL_MS, maxEntries: 50_000 };
    const { view, messages, runs } = SESSION_CHANGE_KINDS;
    const sessionCache = createReadCache<sessions.Session>({ ...cacheOptions, kinds: [view, messages] });
    cleanup.defer(() => sessionCache.close());
    const runStatusCache = createReadCache<string>({ ...cacheOptions, kinds: [runs] });
    cleanup.defer(() => runStatusCache.close());
    const changeNotices = createChangeNotices(nats.nc, streams);
    cleanup.defer(() => changeNotices.close());
    const documents = new Map<ApiVersion, object>();
    const deps: GatewayDeps = {
      ...clients,
      browserPoolReplicas: config.BROWSER_POOL_REPLICAS,
      findProject: (idOrName) => store.findProject(idOrName),
      rateLimitRequests: config.RATE_LIMIT_REQUESTS,
      sessionCache,
      runStatusCache,
      changeNotices,
      requireCredit: createCreditCheck(config.BILLING_ADDR ? clients.billing : undefined),
      requireOwnKey: createOwnKeyCheck(config.RUNNER_ADDR ? clients.runner : undefined),
      requireModelRoute: createModelRouteCheck(config.RUNNER_ADDR ? clients.runner : undefined),
      requireBrowserCapacity: createBrowserCapacityCheck(
        config.BROWSER_POOL_ADDR ? clients.browserPool : undefined,
        log,
      ),
      blobs,
      urls,
      uploads,
      models: loadModelCatalog(config.MODEL_CATALOG),
      publicUrl,
      health,
      openApiDocument: (version) => {
        let document = documents.get(version);
        if (!document) {
          document = buildOpenApiDocument(
            ROUTES.filter((r) => apiVersionOf(r.path) === version),
            deps,
            API_DOCUMENTS[version](publicUrl),
          );
          documents.set(version, document);
        }
        return document;
      },
      log,
    };
    const rateLimit = createProjectRateLimit({
      requests: config.RATE_LIMIT_REQUESTS,
      windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS,
      pool,
      namespace: config.NAMESPACE,
    });
    http.handle(
      createHttpApp(ROUTES, deps, {
        authenticator,
        rateLimit,
        maxBodyBytes: config.MAX_BODY_BYTES,
        metrics,
      }).callback(),
    );

    const grpc = createGrpcServer({ onCall: metrics.grpcCall });
    grpc.add(gateway.ProjectAdminService, projectAdminServer(admin, log));
    const grpcPort = await grpc.listen(config.GRPC_HOST, config.GRPC_PORT);
    cleanup.defer(() => grpc.close());
    const metricsServer = await startMetricsServer(metrics.registry, config.GRPC_HOST, config.METRICS_PORT);
    cleanup.defer(() => metricsServer.close());
    grpc.setHealth("SERVING");
    log.info({ port: http.port, grpcPort, metricsPort: metricsServer.port, publicUrl }, "gateway listening");

    return { port: http.port, grpcPort, metricsPort: metricsServer.port, publicUrl, close: cleanup.close };
  });
}
