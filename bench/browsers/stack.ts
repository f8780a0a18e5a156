import type { ChildProcess } from "node:child_process";
import { startServiceProcess, waitUntil } from "../support/processes";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitForExit } from "@bas/embedded-infra";
import { checkGrpcHealth } from "@bas/service-kit";
import { findProcessesByArgPrefix, processGroupOf } from "../../services/browser-pool/src/adapters/local/proc-fs";
import { benchInfra } from "../support/infra";

/**
 * The deployed shape on one machine: NATS, Postgres, browser-pool and the gateway as their own processes, so the
 * benchmark client never shares an event loop with the proxy it measures.
 */
/** `egressAllow`: the destinations (BROWSER_EGRESS_ALLOW) the benchmark's browsers open, e.g. its test site. */
export async function startBrowserStack(egressAllow = "") {
  const infra = await benchInfra();
  const dataDir = mkdtempSync(join(tmpdir(), "bas-bench-browsers-"));
  const [poolPort, cdpPort, httpPort, gatewayGrpc] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const key = `bas_bench_${randomBytes(16).toString("hex")}`;
  // Its own node id: a node takes over the browsers its id left in the read model, and with DATABASE_URL two
  // benchmarks share one.
  const nodeId = `bench-${randomBytes(3).toString("hex")}`;
  const common = {
    NATS_URL: infra.natsUrl,
    DATABASE_URL: infra.databaseUrl,
    NAMESPACE: `bench${randomBytes(3).toString("hex")}`,
    LOG_LEVEL: "warn",
    METRICS_PORT: "0",
  };
  let pool: ChildProcess | undefined;
  let poolEnv: Record<string, string> = {};
  const gatewayProcess = startServiceProcess("gateway", "services/gateway/src/main.ts", {
    ...common,
    PORT: String(httpPort),
    HTTP_HOST: "127.0.0.1",
    GRPC_PORT: String(gatewayGrpc),
    BOOTSTRAP_API_KEY: key,
    BLOB_SIGNING_KEY: randomBytes(32).toString("hex"),
    BROWSER_POOL_ADDR: `127.0.0.1:${poolPort}`,
  });
  const baseUrl = `http://127.0.0.1:${httpPort}`;

  async function startPool(env: Record<string, string>) {
    if (pool) {
      pool.kill("SIGTERM");
      await waitForExit(pool, 30_000);
    }
    poolEnv = {
      ...common,
      GRPC_PORT: String(poolPort),
      CDP_PORT: String(cdpPort),
      NODE_ID: nodeId,
      BROWSER_DATA_DIR: dataDir,
      MAX_BROWSERS_PER_PROJECT: "1000",
      MAX_BROWSERS_PER_NODE: "1000",
      BROWSER_EGRESS_ALLOW: egressAllow,
      ...env,
    };
    pool = startServiceProcess("browser-pool", "services/browser-pool/src/main.ts", poolEnv);
    await waitUntil("browser-pool", () => checkGrpcHealth(`127.0.0.1:${poolPort}`, 500));
  }

  async function request(method: string, path: string, body?: unknown) {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { "X-Service-API-Key": key, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  await waitUntil("gateway", async () => (await fetch(`${baseUrl}/healthz`)).status > 0);

  return {
    dataDir,
    startPool,
    /** The browser-pool process. */
    poolPid: () => pool?.pid,
    gatewayPid: () => gatewayProcess.pid,
    request,
    /** browser-pool's own view: live browsers and idle warm ones. */
    async poolState(): Promise<{ browsers: number; warmIdle: number }> {
      return (await (await fetch(`http://127.0.0.1:${cdpPort}/healthz`)).json()) as {
        browsers: number;
        warmIdle: number;
      };
    },
    /** Browser ids whose Chromium runs under the data dir (idle warm ones included). */
    async chromiumIds(): Promise<string[]> {
      const prefix = `--user-data-dir=${dataDir}/`;
      return [...new Set((await findProcessesByArgPrefix(prefix)).map((p) => p.arg.slice(prefix.length)))];
    },
    async close() {
      for (const child of [pool, gatewayProcess]) {
        if (!child || child.exitCode !== null) continue;
        child.kill("SIGTERM");
        await waitForExit(child, 30_000);
      }
      for (const { pid } of await findProcessesByArgPrefix(`--user-data-dir=${dataDir}/`)) {
        const group = await processGroupOf(pid);
        if (group) process.kill(-group, "SIGKILL");
      }
      rmSync(dataDir, { recursive: true, force: true });
      await infra.close();
    },
  };
}

export type BrowserStack = Awaited<ReturnType<typeof startBrowserStack>>;
