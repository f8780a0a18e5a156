import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type EmbeddedNats,
  type EmbeddedPostgres,
  freePort,
  startNatsServer,
  startPostgres,
  waitForExit,
} from "@bas/embedded-infra";
import { billing as billingProto, sessions } from "@bas/proto";
import { streamNames } from "@bas/event-store";
import { MEANS_CHROMIUM, runEnv } from "@bas/testing";
import { checkGrpcHealth, connectClient, connectNats, type PromiseClient } from "@bas/service-kit";
import pino from "pino";
import { startFixtureSites, type FixtureSites } from "../../../../test/fixtures/sites";
import { type ScriptedLlm, startScriptedLlm } from "../../../../test/support/scripted-llm";
import { loadBillingConfig } from "../../../billing/src/config";
import { type BillingService, startBillingService } from "../../../billing/src/service";
import { loadSessionsConfig } from "../../../sessions/src/config";
import { type SessionsService, startSessionsService } from "../../../sessions/src/service";
import { loadRunnerConfig } from "../../src/config";
import { type RunnerService, startRunnerService } from "../../src/service";

const ROOT = join(__dirname, "../../../..");
export const OUTAGE_PROJECT = "project-outages";

/**
 * A whole task path on infrastructure of its own, so that this test can kill it: its own nats-server and Postgres
 * (the ones the other test files share must stay up), browser-pool as a separate process (kill -9 leaves its
 * Chromium running, as in production), and sessions, billing and a runner in this process (they reconnect).
 */
export interface OutageStack {
  sites: FixtureSites;
  llm: ScriptedLlm;
  api: PromiseClient<sessions.SessionsClient>;
  billing: PromiseClient<billingProto.BillingClient>;
  /** The runner's and the sessions service's log lines (JSON), to see what they waited for. */
  logLines(): string[];
  /** Tasks waiting in the work queue (dispatched, not yet done with). */
  queuedTasks(): Promise<number>;
  create(task: string, model: string): Promise<sessions.Session>;
  /** Polls the session until `done` holds; errors while a dependency is down are part of the outage. */
  waitFor(id: string, done: (s: sessions.Session) => boolean, timeoutMs?: number): Promise<sessions.Session>;
  kill(part: "nats" | "postgres" | "browser-pool"): Promise<void>;
  restart(part: "nats" | "postgres" | "browser-pool"): Promise<void>;
  close(): Promise<void>;
}

export async function startOutageStack(): Promise<OutageStack> {
  const root = mkdtempSync(join(tmpdir(), "bas-outages-"));
  chmodSync(root, 0o755); // the postgres user must be able to reach its data dir inside
  const [natsPort, pgPort, bpGrpcPort, bpCdpPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const dirs = { nats: join(root, "nats"), pg: join(root, "pg"), browsers: join(root, "browsers") };
  const startNats = () => startNatsServer({ dataDir: dirs.nats, port: natsPort });
  // Not `fast`: with asynchronous commits a killed Postgres forgets commits it confirmed, which no deployment does.
  const startPg = () => startPostgres({ dataDir: dirs.pg, database: "bas", port: pgPort });
  const [natsStarted, pgStarted] = await Promise.allSettled([startNats(), startPg()]);
  let nats: EmbeddedNats | undefined = natsStarted.status === "fulfilled" ? natsStarted.value : undefined;
  let pg: EmbeddedPostgres | undefined = pgStarted.status === "fulfilled" ? pgStarted.value : undefined;
  if (!nats || !pg) {
    await Promise.all([nats?.stop(), pg?.stop()]);
    rmSync(root, { recursive: true, force: true });
    throw natsStarted.status === "rejected" ? natsStarted.reason : (pgStarted as PromiseRejectedResult).reason;
  }
  const [sites, llm] = await Promise.all([startFixtureSites({ spaDelayMs: 300 }), startScriptedLlm()]);

  const lines: string[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
        done();
      },
    }),
  );
  const common = {
    NATS_URL: nats.url,
    DATABASE_URL: pg.url,
    NAMESPACE: `out${randomBytes(4).toString("hex")}`,
    LOG_LEVEL: "info",
    GRPC_PORT: "0",
    METRICS_PORT: "0",
    // The sessions service's SMTP receiver (temporary mailboxes) takes any free port too.
    SMTP_PORT: "0",
  };
  const poolEnv = {
    ...common,
    ...runEnv(),
    LOG_LEVEL: "warn",
    OTEL_SDK_DISABLED: "true",
    GRPC_PORT: String(bpGrpcPort),
    CDP_PORT: String(bpCdpPort),
    NODE_ID: "outage-node",
    WARM_POOL_SIZE: "0",
    BROWSER_DATA_DIR: dirs.browsers,
    USAGE_INTERVAL_MS: "60000",
    BROWSER_EGRESS_ALLOW: new URL(sites.url).host,
    CHROMIUM_PATH: MEANS_CHROMIUM,
  };
  let pool: ChildProcess | undefined;
  const startPool = async () => {
    const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "services/browser-pool/src/main.ts")], {
      cwd: ROOT,
      env: poolEnv,
      stdio: ["ignore", "ignore", "inherit"],
    });
    for (;;) {
      if (child.exitCode !== null) throw new Error(`browser-pool exited with ${child.exitCode}`);
      if (await checkGrpcHealth(`127.0.0.1:${bpGrpcPort}`, 500)) return child;
      await sleep(100);
    }
  };

  const started: Array<{ close(): Promise<void> }> = [];
  try {
    pool = await startPool();
    const sessionsService: SessionsService = await startSessionsService(
      loadSessionsConfig({ ...common, PUBLIC_URL: "http://bas.test", SECRETS_KEY: randomBytes(32).toString("hex") }),
      { ackWaitMs: 1_000, logger },
    );
    started.push(sessionsService);
    const billingService: BillingService = await startBillingService(
      loadBillingConfig({ ...common, LOG_LEVEL: "warn" }),
    );
    started.push(billingService);
    const runnerConfig = loadRunnerConfig({
      ...common,
      SESSIONS_ADDR: `127.0.0.1:${sessionsService.grpcPort}`,
      BROWSER_POOL_ADDR: `127.0.0.1:${bpGrpcPort}`,
      BILLING_ADDR: `127.0.0.1:${billingService.grpcPort}`,
      LLM_BASE_URL: llm.url,
      LLM_API_KEY: "unused",
      LLM_MAX_RETRIES: "2",
      // Two at a time: a third task waits in the work queue.
      RUNNER_CONCURRENCY: "2",
      // Longer than any outage here: the heartbeats keep the tasks with this runner throughout.
      TASK_ACK_WAIT_MS: "15000",
      MAX_STEPS: "6",
      STEP_SCREENSHOTS: "false",
      // OUTAGE_GRACE_SECONDS stays at its default (60 s): every outage here is shorter.
    });
    const runner: RunnerService = await startRunnerService(runnerConfig, { logger });
    started.push(runner);
    const natsClient = await connectNats(nats.url, "outage-test");
    const api = connectClient(sessions.SessionsClient, `127.0.0.1:${sessionsService.grpcPort}`);
    const billing = connectClient(billingProto.BillingClient, `127.0.0.1:${billingService.grpcPort}`);

    return {
      sites,
      llm,
      api,
      billing,
      logLines: () => lines,
      async queuedTasks() {
        const info = await natsClient.jsm.streams.info(streamNames(common.NAMESPACE).work.stream);
        return info.state.messages;
      },
      create: (task, model) =>
        api.createSession({
          projectId: OUTAGE_PROJECT,
          task,
          model,
          keepAlive: false,
          sensitiveData: {},
          inbox: false,
          codeMode: false,
          useOwnKey: false,
          outputSchema: undefined,
          browser: { allowedDomains: [], record: false },
          idempotencyKey: randomUUID(),
        }),
      async waitFor(id, done, timeoutMs = 90_000) {
        const deadline = Date.now() + timeoutMs;
        let last: sessions.Session | undefined;
        while (Date.now() < deadline) {
          last = await api.getSession({ projectId: OUTAGE_PROJECT, sessionId: id }).catch(() => last);
          if (last && done(last)) return last;
          await sleep(100);
        }
        throw new Error(`session ${id} did not reach the expected state; last: ${JSON.stringify(last)}`);
      },
      async kill(part) {
        if (part === "nats" && nats) {
          await killHard([nats.pid]);
          nats = undefined;
        } else if (part === "postgres" && pg) {
          const lockFile = join(dirs.pg, "postmaster.pid");
          const postmaster = Number(readFileSync(lockFile, "utf8").split("\n")[0]);
          await killHard([postmaster, ...childrenOf(postmaster)]);
          // A dead postmaster nobody reaped yet would still look alive to the next one through its lock file.
          rmSync(lockFile, { force: true });
          pg = undefined;
        } else if (part === "browser-pool" && pool) {
          pool.kill("SIGKILL");
          await waitForExit(pool, 10_000);
          pool = undefined;
        }
      },
      async restart(part) {
        if (part === "nats") nats = await startNats();
        else if (part === "postgres") pg = await startPg();
        else pool = await startPool();
      },
      async close() {
        // A test that failed mid-outage: bring the infrastructure back, so that everything closes cleanly.
        nats ??= await startNats().catch(() => undefined);
        pg ??= await startPg().catch(() => undefined);
        api.close();
        billing.close();
        await natsClient.nc.close().catch(() => undefined);
        for (const s of started.reverse()) await s.close().catch(() => undefined);
        if (pool) {
          // SIGTERM: browser-pool stops the browsers it runs.
          pool.kill("SIGTERM");
          await waitForExit(pool, 20_000);
        }
        // Whatever a failed test left running (a browser-pool that could not stop its browsers).
        await killHard(processesUsing(dirs.browsers));
        await Promise.all([sites.close(), llm.close(), nats?.stop(), pg?.stop()]);
        rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const s of started.reverse()) await s.close().catch(() => undefined);
    pool?.kill("SIGKILL");
    await Promise.all([sites.close(), llm.close(), nats?.stop(), pg?.stop()]);
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
}

/** Processes with an argument naming something inside `dir` (the Chromium processes of its browsers). */
function processesUsing(dir: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(`${dir}/`)) found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** Processes whose parent is `pid` (Postgres's backends and helpers). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) children.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return children;
}

/** SIGKILL, then wait until each process is gone (or a zombie nobody will wait for). */
async function killHard(pids: number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  for (const pid of pids) {
    for (;;) {
      let state: string | undefined;
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
      } catch {
        break;
      }
      if (state === "Z") break;
      await sleep(20);
    }
  }
}
