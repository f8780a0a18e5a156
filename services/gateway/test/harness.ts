import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { blobBucketName } from "@bas/blobs";
import { type BillingService, loadBillingConfig, startBillingService } from "@bas/billing";
import { type BrowserPoolService, loadBrowserPoolConfig, startBrowserPoolService } from "@bas/browser-pool";
import { gateway as gatewayProto } from "@bas/proto";
import { connectClient } from "@bas/service-kit";
import {
  loadSessionsConfig,
  type SessionsService,
  type SessionsServiceDeps,
  startSessionsService,
} from "@bas/sessions";
import { createTestInfra, type TestInfra } from "@bas/testing";
import { loadGatewayConfig } from "../src/config";
import { type GatewayService, type GatewayServiceDeps, startGatewayService } from "../src/service";

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface RequestOptions {
  /** JSON-encoded unless `raw` is given. */
  body?: unknown;
  /** Sent as is (for malformed JSON). */
  raw?: string;
  /** The API key; default the bootstrap key; null sends none. */
  key?: string | null;
  headers?: Record<string, string>;
}

export interface Stack {
  infra: TestInfra;
  gateway: GatewayService;
  sessions?: SessionsService;
  billing?: BillingService;
  browserPool?: BrowserPoolService;
  baseUrl: string;
  /** Valid for the default project. */
  bootstrapKey: string;
  blobSigningKey: string;
  env: Record<string, string>;
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  /** The API key of a new project (through `ProjectAdmin`), for tests that need a second tenant or a clean slate. */
  newProjectKey(): Promise<string>;
  close(): Promise<void>;
}

export interface StackOptions {
  /** Start the sessions service in-process (default true). */
  sessions?: boolean;
  /** Start the billing service in-process and point the gateway at it (default false). */
  billing?: boolean;
  /** Start browser-pool in-process (real Chromium) with this extra environment and point the gateway at it. */
  browserPool?: Record<string, string>;
  /** Extra gateway environment. */
  env?: Record<string, string>;
  sessionsEnv?: Record<string, string>;
  /** What the sessions service is started with besides its environment (a clock of the test's, for one). */
  sessionsDeps?: SessionsServiceDeps;
  gatewayDeps?: GatewayServiceDeps;
}

/** Real NATS + Postgres (from the jest global setup), the sessions service and the gateway, isolated by namespace. */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const infra = await createTestInfra();
  const common = {
    NATS_URL: process.env.NATS_URL!,
    DATABASE_URL: infra.databaseUrl,
    NAMESPACE: infra.namespace,
    LOG_LEVEL: "silent",
    GRPC_PORT: "0",
    METRICS_PORT: "0",
    // The sessions service's SMTP receiver (temporary mailboxes) takes any free port too.
    SMTP_PORT: "0",
  };
  let sessions: SessionsService | undefined;
  if (options.sessions !== false) {
    sessions = await startSessionsService(
      loadSessionsConfig({ ...common, SECRETS_KEY: randomBytes(32).toString("hex"), ...options.sessionsEnv }),
      options.sessionsDeps,
    );
  }
  const billing = options.billing ? await startBillingService(loadBillingConfig(common)) : undefined;
  const browserDataDir = options.browserPool ? mkdtempSync(join(tmpdir(), "bas-gw-bp-")) : undefined;
  const browserPool = options.browserPool
    ? await startBrowserPoolService(
        loadBrowserPoolConfig({
          ...common,
          CDP_PORT: "0",
          WARM_POOL_SIZE: "0",
          BROWSER_DATA_DIR: browserDataDir!,
          ...options.browserPool,
        }),
      )
    : undefined;
  const bootstrapKey = `bas_test_${randomBytes(16).toString("hex")}`;
  const blobSigningKey = randomBytes(32).toString("hex");
  const env: Record<string, string> = {
    ...common,
    PORT: "0",
    HOST: "127.0.0.1",
    BOOTSTRAP_API_KEY: bootstrapKey,
    BLOB_SIGNING_KEY: blobSigningKey,
    ...(sessions ? { SESSIONS_ADDR: `127.0.0.1:${sessions.grpcPort}` } : {}),
    ...(billing ? { BILLING_ADDR: `127.0.0.1:${billing.grpcPort}` } : {}),
    ...(browserPool ? { BROWSER_POOL_ADDR: `127.0.0.1:${browserPool.grpcPort}` } : {}),
    ...options.env,
  };
  const gateway = await startGatewayService(loadGatewayConfig(env), options.gatewayDeps);
  const baseUrl = `http://127.0.0.1:${gateway.port}`;

  async function request(method: string, path: string, opts: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? bootstrapKey : opts.key;
    if (key !== null) headers["X-Service-API-Key"] = key;
    let body: string | undefined = opts.raw;
    if (body === undefined && opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers["Content-Type"] ??= "application/json";
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  return {
    infra,
    gateway,
    sessions,
    billing,
    browserPool,
    baseUrl,
    bootstrapKey,
    blobSigningKey,
    env,
    request,
    async newProjectKey() {
      const admin = connectClient(gatewayProto.ProjectAdminClient, `127.0.0.1:${gateway.grpcPort}`);
      try {
        const project = await admin.createProject({ name: `p-${randomBytes(4).toString("hex")}` });
        return (await admin.createApiKey({ projectId: project.id, label: "test" })).plainKey;
      } finally {
        admin.close();
      }
    },
    async close() {
      await gateway.close();
      await sessions?.close();
      await billing?.close();
      await browserPool?.close();
      if (browserDataDir) rmSync(browserDataDir, { recursive: true, force: true });
      await infra.jsm.streams.delete(`OBJ_${blobBucketName(infra.namespace)}`).catch(() => undefined);
      await infra.close();
    },
  };
}
