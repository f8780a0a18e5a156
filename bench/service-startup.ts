/**
 * Each service as the images ship it, compiled JavaScript (`node --enable-source-maps dist/<name>/main.js`, after
 * `npm run build`), against `node --import tsx services/<name>/src/main.ts`, in one run: start-up time (spawn →
 * healthy: gRPC health SERVING, for the gateway /healthz 200) and idle memory (RSS of the process and its children,
 * tsx's esbuild among them, BENCH_SETTLE_MS after healthy). tsx twice: with its transform cache warm (a developer's
 * second start) and cold (an empty cache, as in a fresh container).
 *
 * A first, compiled stack brings up streams and schema and stays as the rest of the deployment; each measured
 * process is one more replica joining it, as in a rolling update. BENCH_RUNS rounds, the three ways interleaved.
 * `npm run bench -- service-startup` (BENCH_RUNS=3, BENCH_SETTLE_MS=5000).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort, waitForExit } from "@bas/embedded-infra";
import { checkGrpcHealth } from "@bas/service-kit";
import { findProcessesByArgPrefix, treeMemory } from "../services/browser-pool/src/adapters/local/proc-fs";
import { buildServices } from "../scripts/build";
import { SERVICE_NAMES, type ServiceName, stackEnvs } from "../test/support/service-envs";
import { benchInfra } from "./support/infra";

const ROOT = resolve(__dirname, "..");
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 5_000);
const WAYS = ["compiled", "tsx warm", "tsx cold"] as const;
type Way = (typeof WAYS)[number];

const command = (way: Way, name: ServiceName) =>
  way === "compiled"
    ? ["--enable-source-maps", join(ROOT, "dist", name, "main.js")]
    : ["--import", "tsx", join(ROOT, "services", name, "src", "main.ts")];

async function waitHealthy(child: ChildProcess, healthy: () => Promise<boolean>, log: () => string) {
  const deadline = Date.now() + 60_000;
  while (!(await healthy().catch(() => false))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`did not become healthy:\n${log()}`);
    await sleep(10);
  }
}

/** Starts one replica `way`, waits until healthy, lets it settle; its start-up time (ms) and RSS (MB). */
async function measure(way: Way, name: ServiceName, env: Record<string, string>, dir: string) {
  const [port, grpcPort, cdpPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const nodeId = `b${randomBytes(4).toString("hex")}`;
  const replica = {
    ...env,
    GRPC_PORT: String(grpcPort),
    ...(name === "gateway" ? { PORT: String(port) } : {}),
    ...(name === "browser-pool"
      ? { CDP_PORT: String(cdpPort), NODE_ID: nodeId, BROWSER_DATA_DIR: join(dir, nodeId) }
      : {}),
    // tsx keeps its transform cache in $TMPDIR/tsx-<uid>: an empty TMPDIR is a cold cache.
    ...(way === "tsx cold" ? { TMPDIR: mkdtempSync(join(dir, "tsx-cold-")) } : {}),
  };
  const started = performance.now();
  const child = spawn(process.execPath, command(way, name), {
    cwd: ROOT,
    env: { ...process.env, ...replica, LOG_LEVEL: "warn", OTEL_SDK_DISABLED: "true" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr!.on("data", (d) => {
    log += d;
  });
  const healthy =
    name === "gateway"
      ? async () => (await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) })).ok
      : () => checkGrpcHealth(`127.0.0.1:${grpcPort}`, 1_000);
  try {
    await waitHealthy(child, healthy, () => log);
    const startupMs = performance.now() - started;
    await sleep(SETTLE_MS);
    return { startupMs, rssMb: ((await treeMemory(child.pid!))?.rssBytes ?? 0) / 2 ** 20 };
  } finally {
    child.kill("SIGTERM");
    await waitForExit(child, 30_000).catch(() => child.kill("SIGKILL"));
  }
}

async function main() {
  const infra = await benchInfra();
  const dataDir = mkdtempSync(join(tmpdir(), "bas-bench-startup-"));
  const stack = await stackEnvs({ ...infra, namespace: `bench${randomBytes(4).toString("hex")}`, dataDir });
  const background: ChildProcess[] = [];
  const cleanup = async () => {
    for (const child of background) child.kill("SIGTERM");
    await Promise.all(background.map((c) => waitForExit(c, 30_000).catch(() => c.kill("SIGKILL"))));
    rmSync(dataDir, { recursive: true, force: true });
    await infra.close();
  };
  // Interrupted, it still leaves nothing running: its NATS and Postgres go too.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void cleanup().finally(() => process.exit(130)));
  }
  try {
    await buildServices();
    // The rest of the deployment, compiled, healthy before anything is measured.
    for (const name of SERVICE_NAMES) {
      const child = spawn(process.execPath, command("compiled", name), {
        cwd: ROOT,
        env: { ...process.env, ...stack.env[name], LOG_LEVEL: "warn" },
        stdio: ["ignore", "ignore", "inherit"],
      });
      background.push(child);
    }
    const gateway = background[SERVICE_NAMES.indexOf("gateway")];
    await waitHealthy(
      gateway,
      async () => (await fetch(`${stack.baseUrl}/healthz`)).ok,
      () => "see above",
    );
    // One tsx start of each first, unmeasured: it fills the warm cache.
    for (const name of SERVICE_NAMES) await measure("tsx warm", name, stack.env[name], dataDir);

    const results = new Map<string, { startupMs: number; rssMb: number }[]>();
    for (let run = 0; run < RUNS; run++) {
      for (const name of SERVICE_NAMES) {
        // The order of the ways rotates, so that drift over the run hits each alike.
        for (const way of WAYS.map((_, i) => WAYS[(i + run) % WAYS.length])) {
          const key = `${name}/${way}`;
          results.set(key, [...(results.get(key) ?? []), await measure(way, name, stack.env[name], dataDir)]);
        }
      }
    }
    print(results);
    await printAtRest(background, infra.root);
  } finally {
    await cleanup();
  }
}

/**
 * The whole control plane at rest, as shipped: the five compiled services, NATS and Postgres (with all their
 * processes), no browsers, PSS summed (shared pages counted once across them).
 */
async function printAtRest(services: ChildProcess[], infraRoot: string) {
  await sleep(SETTLE_MS);
  const parts: Array<[string, number[]]> = [["five services (compiled)", services.map((c) => c.pid!)]];
  for (const [name, dir] of [
    ["NATS", "nats"],
    ["Postgres", "pg"],
  ]) {
    const found = await findProcessesByArgPrefix(join(infraRoot, dir));
    // The oldest process naming the folder is the server; what it started is below it.
    parts.push([
      name,
      found
        .map((p) => p.pid)
        .sort((a, b) => a - b)
        .slice(0, 1),
    ]);
  }
  let totalPss = 0;
  let totalProcesses = 0;
  console.log("control plane at rest (no browsers), PSS");
  for (const [name, roots] of parts) {
    let pss = 0;
    let processes = 0;
    for (const root of roots) {
      const m = await treeMemory(root);
      pss += m?.pssBytes ?? 0;
      processes += m?.processes ?? 0;
    }
    totalPss += pss;
    totalProcesses += processes;
    console.log(`  ${name.padEnd(32)}${`${(pss / 2 ** 20).toFixed(0)} MB`.padStart(10)}  ${processes} processes`);
  }
  console.log(
    `  ${"all".padEnd(32)}${`${(totalPss / 2 ** 20).toFixed(0)} MB`.padStart(10)}  ${totalProcesses} processes (target ≤ 350 MB)`,
  );
  if (process.env.NATS_URL || process.env.DATABASE_URL)
    console.log("  (NATS or Postgres given from outside: not counted)");
}

function print(results: Map<string, { startupMs: number; rssMb: number }[]>) {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const of = (name: string, way: Way, field: "startupMs" | "rssMb") =>
    median(results.get(`${name}/${way}`)!.map((r) => r[field]));
  const cell = (value: number, base: number, unit: string) =>
    `${value.toFixed(0).padStart(5)} ${unit} (${(value / base).toFixed(1)}×)`;
  console.log(`median of ${RUNS} runs, (n×) against compiled; RSS ${SETTLE_MS / 1000} s after healthy\n`);
  for (const [title, field, unit] of [
    ["start-up: spawn → healthy", "startupMs", "ms"],
    ["idle RSS (process and children)", "rssMb", "MB"],
  ] as const) {
    console.log(`${title.padEnd(34)}${WAYS.map((w) => w.padStart(16)).join("")}`);
    for (const name of SERVICE_NAMES) {
      const base = of(name, "compiled", field);
      console.log(`  ${name.padEnd(32)}${WAYS.map((w) => cell(of(name, w, field), base, unit).padStart(16)).join("")}`);
    }
    console.log();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
