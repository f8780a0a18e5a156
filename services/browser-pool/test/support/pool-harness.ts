import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { browserPool } from "@bas/proto";
import { connectClient, type PromiseClient } from "@bas/service-kit";
import { createTestInfra, eventually as sharedEventually, type TestInfra } from "@bas/testing";
import { findProcessesByArgPrefix } from "../../src/adapters/local/proc-fs";
import { loadBrowserPoolConfig } from "../../src/config";
import { type BrowserPoolService, type BrowserPoolServiceDeps, startBrowserPoolService } from "../../src/service";

export type PoolClient = PromiseClient<InstanceType<typeof browserPool.BrowserPoolClient>>;

/** A clock the test can move forward (timeouts are checked against it). */
export function testClock() {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    advance(ms: number) {
      offset += ms;
    },
  };
}

export interface PoolHarness {
  infra: TestInfra;
  service: BrowserPoolService;
  client: PoolClient;
  dataDir: string;
  env: Record<string, string>;
  clock: ReturnType<typeof testClock>;
  /** Ids of the browsers whose Chromium processes run under this node's data dir right now. */
  chromiumIds(): Promise<string[]>;
  close(): Promise<void>;
}

/** Browser-pool env for a test: its own namespace, database, data dir and node id; ports picked by the kernel. */
export function testEnv(infra: TestInfra, dataDir: string, overrides: Record<string, string> = {}) {
  return {
    NATS_URL: process.env.NATS_URL!,
    DATABASE_URL: infra.databaseUrl,
    NAMESPACE: infra.namespace,
    LOG_LEVEL: "silent",
    GRPC_PORT: "0",
    METRICS_PORT: "0",
    CDP_PORT: "0",
    WARM_POOL_SIZE: "0",
    NODE_ID: `node-${randomBytes(4).toString("hex")}`,
    BROWSER_DATA_DIR: dataDir,
    USAGE_INTERVAL_MS: "60000",
    ...overrides,
  };
}

export async function chromiumIdsIn(dataDir: string): Promise<string[]> {
  const found = await findProcessesByArgPrefix(`--user-data-dir=${dataDir}/`);
  return [...new Set(found.map((p) => p.arg.slice(`--user-data-dir=${dataDir}/`.length)))].sort();
}

/**
 * Starts browser-pool on fresh infrastructure, or on `shared` infrastructure (a second run of the same node):
 * then closing leaves the infrastructure and data dir to the caller.
 */
export async function startPoolHarness(
  overrides: Record<string, string> = {},
  deps: BrowserPoolServiceDeps = {},
  shared?: { infra: TestInfra; dataDir: string },
): Promise<PoolHarness> {
  const infra = shared?.infra ?? (await createTestInfra());
  const dataDir = shared?.dataDir ?? mkdtempSync(join(tmpdir(), "bas-bp-test-"));
  const env = testEnv(infra, dataDir, overrides);
  const clock = testClock();
  const service = await startBrowserPoolService(loadBrowserPoolConfig(env), {
    now: clock.now,
    timeoutSweepMs: 100,
    ackWaitMs: 2_000,
    ...deps,
  });
  // The deadline the runner gives browser-pool (a cold launch on a busy machine takes a while; the pool's own
  // launch and readiness timeouts must be what ends a slow create, not the caller's patience).
  const client = connectClient(browserPool.BrowserPoolClient, `127.0.0.1:${service.grpcPort}`, 60_000);
  return {
    infra,
    service,
    client,
    dataDir,
    env,
    clock,
    chromiumIds: () => chromiumIdsIn(dataDir),
    async close() {
      client.close();
      await service.close();
      if (shared) return;
      await infra.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls until `check` returns a value (not undefined); fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000, what = "condition") {
  try {
    return (await sharedEventually(check, (value) => value !== undefined, timeoutMs)) as T;
  } catch (err) {
    throw new Error(`${what} not reached within ${timeoutMs} ms`, { cause: err });
  }
}
