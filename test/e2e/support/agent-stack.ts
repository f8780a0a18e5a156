import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { blobBucketName } from "@bas/blobs";
import { type BrowserPoolService, loadBrowserPoolConfig, startBrowserPoolService } from "@bas/browser-pool";
import { loadSessionsConfig, type SessionsService, startSessionsService } from "@bas/sessions";
import { freePort } from "@bas/embedded-infra";
import {
  createTestInfra,
  MEANS_CHROMIUM,
  natsUrl,
  type ServiceProcess,
  spawnServiceProcess,
  type TestInfra,
} from "@bas/testing";
import { type BillingService, loadBillingConfig, startBillingService } from "@bas/billing";
import { type GatewayService, loadGatewayConfig, startGatewayService } from "@bas/gateway";
import { gateway as gatewayProto } from "@bas/proto";
import { loadRunnerConfig, type RunnerService, startRunnerService } from "@bas/runner";
import { connectClient } from "@bas/service-kit";
import { leaseBucketName } from "../../../services/runner/src/adapters/nats/task-leases";
import { type FixtureSites, startFixtureSites } from "../../fixtures/sites";
import { type ScriptedLlm, startScriptedLlm } from "../../support/scripted-llm";

export interface Reply {
  status: number;
  body: any;
}

/**
 * The whole service in one process, the way a caller meets it: gateway (REST), sessions, browser-pool (real
 * Chromium), billing and a runner, on one test namespace and database; the scripted model and the fixture sites.
 */
export interface AgentStack {
  infra: TestInfra;
  sites: FixtureSites;
  llm: ScriptedLlm;
  /** The first browser-pool replica (the only one unless `browserPoolReplicas` says otherwise). */
  browserPool: BrowserPoolService;
  /** Every browser-pool replica, the first included. */
  browserPools: BrowserPoolService[];
  runner: RunnerService;
  /** The gRPC addresses of the gateway (ProjectAdmin), the runner and billing, as `npm start` publishes them. */
  grpc: { GATEWAY_ADDR: string; SESSIONS_ADDR: string; RUNNER_ADDR: string; BILLING_ADDR: string };
  /** The sessions service's SMTP receiver (temporary mailboxes), and the domain of its addresses. */
  smtp: { host: string; port: number; domain: string };
  /** The gateway's base URL and the bootstrap key, for calls `request` cannot make (headers of their own). */
  baseUrl: string;
  apiKey: string;
  /** A REST call with the bootstrap key, or with `key`. */
  request(method: string, path: string, body?: unknown, key?: string): Promise<Reply>;
  /** The API key of a new project (through the gateway's `ProjectAdmin`), for a second tenant. */
  newProjectKey(): Promise<string>;
  /** Polls GET /api/v3/sessions/{id} until `done` holds (every `intervalMs`, default 150). */
  waitFor(id: string, done: (session: any) => boolean, timeoutMs?: number, intervalMs?: number): Promise<any>;
  /** Polls a v4 run's cheap status until it has ended, as the official client does; then the whole run. */
  runEnded(runId: string, timeoutMs?: number): Promise<any>;
  /** With `sessionsProcess`: kill -9 the sessions service, and start it again on the same port. */
  sessions?: { kill(): Promise<void>; restart(): Promise<void> };
  close(): Promise<void>;
}

/** Extra environment per service, over the defaults below. */
export interface AgentStackOptions {
  browserPoolEnv?: Record<string, string>;
  runnerEnv?: Record<string, string>;
  /** Run the sessions service as a process of its own, which the test may kill -9 (default: in this process). */
  sessionsProcess?: boolean;
  /** Loopback destinations the browsers may reach besides the fixture sites (`host:port`). */
  egressAllow?: string[];
  /**
   * Browser-pool replicas, each a node of its own (default 1). With more, the gateway and the runner reach them all
   * through one `ipv4:` target, as they reach a headless Service's pods in Kubernetes.
   */
  browserPoolReplicas?: number;
}

export async function startAgentStack(options: AgentStackOptions = {}): Promise<AgentStack> {
  const infra = await createTestInfra();
  const [sites, llm] = await Promise.all([startFixtureSites({ spaDelayMs: 300 }), startScriptedLlm()]);
  const dataDir = mkdtempSync(join(tmpdir(), "bas-e2e-agent-"));
  const common = {
    NATS_URL: natsUrl(),
    DATABASE_URL: infra.databaseUrl,
    NAMESPACE: infra.namespace,
    LOG_LEVEL: "silent",
    GRPC_PORT: "0",
    METRICS_PORT: "0",
  };
  const started: Array<{ close(): Promise<void> }> = [];
  try {
    const billing: BillingService = await startBillingService(loadBillingConfig(common));
    started.push(billing);
    // The gateway's port is known before anything starts: the sessions service puts it in every liveUrl.
    const gatewayPort = await freePort();
    const publicUrl = `http://127.0.0.1:${gatewayPort}`;
    // Known before start, like the gateway's: a sessions process the test restarts keeps it.
    const smtp = { host: "127.0.0.1", port: await freePort(), domain: "mail.test" };
    const sessionsEnv = {
      ...common,
      SMTP_PORT: String(smtp.port),
      MAIL_DOMAIN: smtp.domain,
      PUBLIC_URL: publicUrl,
      SECRETS_KEY: randomBytes(32).toString("hex"),
      BILLING_ADDR: `127.0.0.1:${billing.grpcPort}`,
    };
    let sessions: { grpcPort: number };
    let sessionsProcess: ServiceProcess | undefined;
    const spawnSessions = async (port: number) => {
      sessionsProcess = await spawnServiceProcess({
        entry: "services/sessions/src/main.ts",
        readyMessage: "sessions service ready",
        env: { ...sessionsEnv, GRPC_PORT: String(port) },
      });
    };
    if (options.sessionsProcess) {
      sessions = { grpcPort: await freePort() };
      await spawnSessions(sessions.grpcPort);
      started.push({ close: () => sessionsProcess!.kill("SIGTERM") });
    } else {
      const inProcess: SessionsService = await startSessionsService(loadSessionsConfig(sessionsEnv), {
        ackWaitMs: 1_000,
      });
      started.push(inProcess);
      sessions = inProcess;
    }
    const replicas = options.browserPoolReplicas ?? 1;
    const browserPools: BrowserPoolService[] = [];
    for (let replica = 0; replica < replicas; replica++) {
      const node = `e2e-${randomBytes(4).toString("hex")}`;
      const pool = await startBrowserPoolService(
        loadBrowserPoolConfig({
          ...common,
          CDP_PORT: "0",
          WARM_POOL_SIZE: "0",
          NODE_ID: node,
          BROWSER_DATA_DIR: join(dataDir, node),
          // The fixture sites are on loopback, which a tenant's browser may not reach unless allowed.
          BROWSER_EGRESS_ALLOW: [new URL(sites.url).host, ...(options.egressAllow ?? [])].join(","),
          CHROMIUM_PATH: MEANS_CHROMIUM,
          ...options.browserPoolEnv,
        }),
        { ackWaitMs: 1_000 },
      );
      started.push(pool);
      browserPools.push(pool);
    }
    const browserPool = browserPools[0];
    const browserPoolAddr = {
      BROWSER_POOL_ADDR:
        replicas === 1
          ? `127.0.0.1:${browserPool.grpcPort}`
          : `ipv4:${browserPools.map((p) => `127.0.0.1:${p.grpcPort}`).join(",")}`,
      BROWSER_POOL_REPLICAS: String(replicas),
    };
    const runner = await startRunnerService(
      loadRunnerConfig({
        ...common,
        SESSIONS_ADDR: `127.0.0.1:${sessions.grpcPort}`,
        ...browserPoolAddr,
        BILLING_ADDR: `127.0.0.1:${billing.grpcPort}`,
        LLM_BASE_URL: llm.url,
        LLM_API_KEY: "service-key",
        LLM_MAX_RETRIES: "2",
        TASK_ACK_WAIT_MS: "5000",
        MAX_STEPS: "12",
        PROVIDER_KEY_SECRET: randomBytes(32).toString("hex"),
        ...options.runnerEnv,
      }),
    );
    started.push(runner);
    const apiKey = `bas_e2e_${randomBytes(16).toString("hex")}`;
    const gateway: GatewayService = await startGatewayService(
      loadGatewayConfig({
        ...common,
        PORT: String(gatewayPort),
        HOST: "127.0.0.1",
        PUBLIC_URL: publicUrl,
        BOOTSTRAP_API_KEY: apiKey,
        BLOB_SIGNING_KEY: randomBytes(32).toString("hex"),
        SESSIONS_ADDR: `127.0.0.1:${sessions.grpcPort}`,
        ...browserPoolAddr,
        RUNNER_ADDR: `127.0.0.1:${runner.grpcPort}`,
        BILLING_ADDR: `127.0.0.1:${billing.grpcPort}`,
      }),
    );
    started.push(gateway);
    const base = `http://127.0.0.1:${gateway.port}`;

    const request = async (method: string, path: string, body?: unknown, key = apiKey): Promise<Reply> => {
      const res = await fetch(base + path, {
        method,
        headers: { "X-Service-API-Key": key, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };

    return {
      grpc: {
        GATEWAY_ADDR: `127.0.0.1:${gateway.grpcPort}`,
        SESSIONS_ADDR: `127.0.0.1:${sessions.grpcPort}`,
        RUNNER_ADDR: `127.0.0.1:${runner.grpcPort}`,
        BILLING_ADDR: `127.0.0.1:${billing.grpcPort}`,
      },
      infra,
      sites,
      llm,
      smtp,
      baseUrl: base,
      apiKey,
      browserPool,
      browserPools,
      runner,
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
      async waitFor(id, done, timeoutMs = 45_000, intervalMs = 150) {
        const deadline = Date.now() + timeoutMs;
        let last: Reply | undefined;
        while (Date.now() < deadline) {
          last = await request("GET", `/api/v3/sessions/${id}`);
          if (last.status === 200 && done(last.body)) return last.body;
          await sleep(intervalMs);
        }
        throw new Error(`session ${id} did not reach the expected state; last: ${JSON.stringify(last)}`);
      },
      async runEnded(runId, timeoutMs = 45_000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const { body } = await request("GET", `/api/v4/runs/${runId}/status`);
          if (["completed", "failed", "cancelled"].includes(body.status)) {
            return (await request("GET", `/api/v4/runs/${runId}`)).body;
          }
          if (Date.now() > deadline) throw new Error(`run ${runId} is still ${body.status}`);
          await sleep(150);
        }
      },
      ...(options.sessionsProcess
        ? {
            sessions: {
              kill: () => sessionsProcess!.kill("SIGKILL"),
              restart: () => spawnSessions(sessions.grpcPort),
            },
          }
        : {}),
      async close() {
        for (const s of started.reverse()) await s.close().catch(() => undefined);
        await Promise.all([sites.close(), llm.close()]);
        for (const stream of [`KV_${leaseBucketName(infra.namespace)}`, `OBJ_${blobBucketName(infra.namespace)}`]) {
          await infra.jsm.streams.delete(stream).catch(() => undefined);
        }
        await infra.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const s of started.reverse()) await s.close().catch(() => undefined);
    await Promise.all([sites.close(), llm.close(), infra.close()]);
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}
