import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { sessions } from "@bas/proto";
import { connectClient, type Logger, type PromiseClient } from "@bas/service-kit";
import { createTestInfra, MEANS_CHROMIUM, natsUrl, type TestInfra } from "@bas/testing";
import { loadBillingConfig } from "../../../billing/src/config";
import { type BillingService, startBillingService } from "../../../billing/src/service";
import { loadBrowserPoolConfig } from "../../../browser-pool/src/config";
import { type BrowserPoolService, startBrowserPoolService } from "../../../browser-pool/src/service";
import { loadSessionsConfig } from "../../../sessions/src/config";
import { type SessionsService, startSessionsService } from "../../../sessions/src/service";
import { startFixtureSites, type FixtureSites } from "../../../../test/fixtures/sites";
import { type ScriptedLlm, startScriptedLlm } from "../../../../test/support/scripted-llm";
import { leaseBucketName } from "../../src/adapters/nats/task-leases";
import { loadRunnerConfig } from "../../src/config";
import { type RunnerService, startRunnerService } from "../../src/service";

export const PROJECT = "project-runner-test";

/**
 * The services a task goes through, each started in-process on one test namespace and database: sessions
 * (dispatch, reports), browser-pool (real Chromium), and runners; plus the scripted model and the fixture sites.
 */
export interface RunnerStack {
  infra: TestInfra;
  sites: FixtureSites;
  llm: ScriptedLlm;
  sessionsService: SessionsService;
  browserPool: BrowserPoolService;
  /** Billing, with `billing: true`: the runner checks budgets with it, and it prices the model calls. */
  billing?: BillingService;
  /** The in-process runner (absent with `noRunner`). */
  runner: RunnerService;
  api: PromiseClient<sessions.SessionsClient>;
  /** The environment a runner of this stack is started with (also as a separate process). */
  runnerEnv: Record<string, string>;
  startRunner(overrides?: Record<string, string>): Promise<RunnerService>;
  create(request: Partial<sessions.CreateSessionRequest> & { model: string }): Promise<sessions.Session>;
  /** Polls the session until `done` says so (or fails after `timeoutMs`). */
  waitFor(id: string, done: (s: sessions.Session) => boolean, timeoutMs?: number): Promise<sessions.Session>;
  messages(id: string): Promise<sessions.Message[]>;
  close(): Promise<void>;
}

export interface RunnerStackOptions {
  runnerEnv?: Record<string, string>;
  /** Loggers of the runner and sessions services (default: silent), to inspect their log lines. */
  logger?: Logger;
  /** Start no runner in-process: the test starts its own (`startRunner`, or as a separate process). */
  noRunner?: boolean;
  /** Start billing too (the runner asks it before each model call; it charges each call). */
  billing?: boolean;
}

export async function startRunnerStack(options: RunnerStackOptions = {}): Promise<RunnerStack> {
  const runnerOverrides = options.runnerEnv ?? {};
  const infra = await createTestInfra();
  const [sites, llm] = await Promise.all([startFixtureSites({ spaDelayMs: 300 }), startScriptedLlm()]);
  const dataDir = mkdtempSync(join(tmpdir(), "bas-runner-stack-"));
  const common = {
    NATS_URL: natsUrl(),
    DATABASE_URL: infra.databaseUrl,
    NAMESPACE: infra.namespace,
    LOG_LEVEL: "silent",
    GRPC_PORT: "0",
    METRICS_PORT: "0",
    // The sessions service's SMTP receiver (temporary mailboxes) takes any free port too.
    SMTP_PORT: "0",
  };
  const sessionsService = await startSessionsService(
    loadSessionsConfig({
      ...common,
      PUBLIC_URL: "http://bas.test",
      SECRETS_KEY: randomBytes(32).toString("hex"),
      // Without billing nothing ever prices a browser's last usage: an ended session has no final costs to wait for.
      ...(options.billing ? {} : { FINAL_COSTS_WAIT_MS: "0" }),
    }),
    { ackWaitMs: 1_000, ...(options.logger ? { logger: options.logger } : {}) },
  );
  const browserPool = await startBrowserPoolService(
    loadBrowserPoolConfig({
      ...common,
      CDP_PORT: "0",
      WARM_POOL_SIZE: "0",
      NODE_ID: `node-${randomBytes(4).toString("hex")}`,
      BROWSER_DATA_DIR: dataDir,
      USAGE_INTERVAL_MS: "60000",
      // The fixture sites are on loopback, which a tenant's browser may not reach unless allowed.
      BROWSER_EGRESS_ALLOW: new URL(sites.url).host,
      CHROMIUM_PATH: MEANS_CHROMIUM,
    }),
    { ackWaitMs: 1_000 },
  );
  const billing = options.billing ? await startBillingService(loadBillingConfig(common)) : undefined;
  const runnerEnv: Record<string, string> = {
    ...common,
    ...(billing ? { BILLING_ADDR: `127.0.0.1:${billing.grpcPort}` } : {}),
    SESSIONS_ADDR: `127.0.0.1:${sessionsService.grpcPort}`,
    BROWSER_POOL_ADDR: `127.0.0.1:${browserPool.grpcPort}`,
    LLM_BASE_URL: llm.url,
    LLM_API_KEY: "unused",
    LLM_MAX_RETRIES: "2",
    RUNNER_CONCURRENCY: "2",
    TASK_ACK_WAIT_MS: "3000",
    MAX_STEPS: "12",
    PROVIDER_KEY_SECRET: randomBytes(32).toString("hex"),
    ...runnerOverrides,
  };
  const runners: RunnerService[] = [];
  const startRunner = async (overrides: Record<string, string> = {}) => {
    const service = await startRunnerService(
      loadRunnerConfig({ ...runnerEnv, ...overrides }),
      options.logger ? { logger: options.logger } : {},
    );
    runners.push(service);
    return service;
  };
  const runner = options.noRunner ? (undefined as unknown as RunnerService) : await startRunner();
  const api = connectClient(sessions.SessionsClient, `127.0.0.1:${sessionsService.grpcPort}`);

  return {
    infra,
    sites,
    llm,
    sessionsService,
    browserPool,
    ...(billing ? { billing } : {}),
    runner,
    api,
    runnerEnv,
    startRunner,
    create: (request) =>
      api.createSession({
        projectId: PROJECT,
        keepAlive: false,
        sensitiveData: {},
        inbox: false,
        codeMode: false,
        useOwnKey: false,
        outputSchema: undefined,
        browser: { allowedDomains: [], record: false },
        idempotencyKey: randomUUID(),
        ...request,
      }),
    async waitFor(id, done, timeoutMs = 45_000) {
      const deadline = Date.now() + timeoutMs;
      let last: sessions.Session | undefined;
      while (Date.now() < deadline) {
        last = await api.getSession({ projectId: PROJECT, sessionId: id });
        if (done(last)) return last;
        await sleep(100);
      }
      throw new Error(`session ${id} did not reach the expected state; last: ${JSON.stringify(last)}`);
    },
    async messages(id) {
      return (await api.listMessages({ projectId: PROJECT, sessionId: id, limit: 100, latest: false })).messages;
    },
    async close() {
      api.close();
      for (const r of runners) await r.close();
      await browserPool.close();
      await billing?.close();
      await sessionsService.close();
      await Promise.all([sites.close(), llm.close()]);
      await infra.jsm.streams.delete(`KV_${leaseBucketName(infra.namespace)}`).catch(() => undefined);
      await infra.jsm.streams.delete(`OBJ_${infra.namespace}_blobs`).catch(() => undefined);
      await infra.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
