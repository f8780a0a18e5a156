import { createWriteStream } from "node:fs";
import { isIP } from "node:net";
import { join, resolve } from "node:path";
import { findEngine, type Target } from "@bas/containers";
import { freePort, postgresUser, startNatsServer, startPostgres } from "@bas/embedded-infra";
import { ConfigError } from "@bas/service-kit";
import { banner } from "./banner";
import { loadStackConfig, type StackConfig } from "./config";
import { AlreadyRunningError, lockDataDir } from "./instance-lock";
import { checkPortFree, waitForPort } from "./port-check";
import { type ContainerRuntime, containerRuntime } from "./containers";
import { checkPrerequisites, missingNode } from "./prerequisites";
import { secureDataDir, writePrivateFile } from "./private-files";
import { loadOrCreateSecrets } from "./secrets";
import { checkServiceEnvs } from "./service-env-check";
import { superviseServer } from "./supervised-server";
import { createSupervisor, type Supervisor } from "./supervisor";
import { complain, say, whenOutputCloses } from "./terminal";
import { waitForHealthy } from "./wait-for-healthy";

const ROOT = resolve(__dirname, "../../..");
/** Stopped in this order: no new traffic first, then hand back work, then the state owners; NATS and Postgres last. */
const SHUTDOWN_ORDER = ["gateway", "runner", "sessions", "browser-pool", "billing"];

/** What stops what has started so far; run last-started first. */
const stopSteps: Array<() => unknown> = [];
/** What ends, at once, what has started so far: for a stop that overruns its deadline. */
const killSteps: Array<() => void> = [];
/** A stop always stops: whatever is still running this long after the signal is killed (the promise is 20 s). */
const STOP_DEADLINE_MS = 15_000;
let shuttingDown = false;

async function shutdown(reason: string, exitCode = 0): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  setTimeout(() => {
    complain(`still stopping after ${STOP_DEADLINE_MS / 1000} s: killing what is left`);
    for (const kill of killSteps) kill();
    process.exit(exitCode || 1);
  }, STOP_DEADLINE_MS).unref();
  if (stopSteps.length > 0) say(`\n${reason}: stopping...`);
  for (const step of stopSteps.reverse()) await step();
  if (stopSteps.length > 0) say("stopped.");
  process.exit(exitCode);
}

// Whatever ends the launcher's session ends the stack, at any moment of start-up: Ctrl-C, a kill, a closed terminal,
// a closed output pipe. NATS and Postgres run detached (a Ctrl-C reaches only the launcher): only it can stop them.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void shutdown(signal));
whenOutputCloses(() => void shutdown("output closed"));

function killProcess(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone already
  }
}

/** `--containers` (npm run start:containers): NATS, Postgres and the services run as containers of their images. */
const IN_CONTAINERS = process.argv.includes("--containers");

/** The container engine and the images, checked as the programs are for `npm start`. */
async function containerPrerequisites(dataDir: string) {
  const missing = [missingNode()].filter((line) => line !== undefined);
  let runtime: ContainerRuntime | undefined;
  try {
    runtime = containerRuntime(findEngine(), dataDir);
    const images = await runtime.missingImages();
    if (images.length > 0) missing.push(`the images ${images.join(", ")}: build them with npm run images`);
  } catch (err) {
    missing.push((err as Error).message);
  }
  return { missing, runtime, chromiumPath: undefined };
}

/** Everything is checked before anything starts: a mistake costs a second, not two minutes of restarts. */
async function main() {
  const config = loadStackConfig();
  const inContainers = IN_CONTAINERS ? await containerPrerequisites(config.DATA_DIR) : undefined;
  const prerequisites = inContainers ?? checkPrerequisites(config);
  const runtime = inContainers?.runtime;
  if (prerequisites.missing.length > 0) {
    const lines = prerequisites.missing.map((line) => `  - ${line}`).join("\n");
    throw new ConfigError(`cannot start, this machine lacks what it needs (npm run setup installs it):\n${lines}`);
  }
  const dataDir = config.DATA_DIR;
  const logDir = join(dataDir, "logs");
  const publicUrl = `http://${config.HOST}:${config.PORT}`;
  secureDataDir(dataDir, {
    logDir,
    postgresGroup: config.DATABASE_URL || runtime ? undefined : postgresUser()?.gid,
  });
  const lock = lockDataDir(dataDir, publicUrl);
  stopSteps.push(() => lock.release());
  await checkPortFree(config.HOST, config.PORT);

  const secrets = loadOrCreateSecrets(dataDir);
  const apiKey = config.BOOTSTRAP_API_KEY ?? secrets.apiKey;
  const [
    natsPort,
    pgPort,
    sessionsPort,
    browserPoolPort,
    runnerPort,
    billingPort,
    gatewayGrpcPort,
    cdpPort,
    freeSmtpPort,
    ...metricsPorts
  ] = await Promise.all(Array.from({ length: 14 }, () => freePort()));
  // The temporary mailboxes' SMTP receiver (in the sessions service): a free port unless SMTP_PORT names one.
  const smtpPort = process.env.SMTP_PORT ? Number(process.env.SMTP_PORT) : freeSmtpPort;
  // Each service's /metrics on a port of its own, by service name (stack.env lists them, for a local Prometheus).
  const metricsPort = Object.fromEntries(SHUTDOWN_ORDER.map((name, i) => [name, metricsPorts[i]]));
  const addr = (port: number) => `127.0.0.1:${port}`;
  const common: NodeJS.ProcessEnv = {
    // The services read their own variables from what the launcher was given.
    ...process.env,
    NAMESPACE: config.NAMESPACE,
    LOG_LEVEL: config.LOG_LEVEL,
    GRPC_HOST: "127.0.0.1",
    PUBLIC_URL: publicUrl,
    SESSIONS_ADDR: addr(sessionsPort),
    BROWSER_POOL_ADDR: addr(browserPoolPort),
    RUNNER_ADDR: addr(runnerPort),
    BILLING_ADDR: addr(billingPort),
    SECRETS_KEY: config.SECRETS_KEY ?? secrets.secretsKey,
    BLOB_SIGNING_KEY: config.BLOB_SIGNING_KEY ?? secrets.blobSigningKey,
    PROVIDER_KEY_SECRET: config.PROVIDER_KEY_SECRET ?? secrets.providerKeySecret,
    XDG_CONFIG_HOME: config.XDG_CONFIG_HOME ?? join(dataDir, "xdg", "config"),
    XDG_CACHE_HOME: config.XDG_CACHE_HOME ?? join(dataDir, "xdg", "cache"),
  };
  const services: Array<{ name: string; port: number; env: NodeJS.ProcessEnv }> = [
    { name: "billing", port: billingPort, env: {} },
    {
      name: "browser-pool",
      port: browserPoolPort,
      env: {
        CDP_PORT: String(cdpPort),
        CDP_HOST: config.HOST,
        CDP_PUBLIC_URL: `ws://${config.HOST}:${cdpPort}`,
        ...(prerequisites.chromiumPath ? { CHROMIUM_PATH: prerequisites.chromiumPath } : {}),
        // A fixed node id and browser folder: a restarted browser-pool re-adopts the browsers it left running.
        NODE_ID: "local",
        BROWSER_DATA_DIR: join(dataDir, "browsers"),
        // The stack's own ports stay closed to tenants' browsers whatever BROWSER_EGRESS_ALLOW opens.
        BROWSER_EGRESS_DENY: [
          config.PORT,
          sessionsPort,
          runnerPort,
          billingPort,
          gatewayGrpcPort,
          cdpPort,
          smtpPort,
          ...metricsPorts,
        ]
          .flatMap((port) => [`127.0.0.1:${port}`, ...(isIP(config.HOST) ? [`[${config.HOST}]:${port}`] : [])])
          .join(","),
      },
    },
    { name: "sessions", port: sessionsPort, env: { SMTP_PORT: String(smtpPort) } },
    { name: "runner", port: runnerPort, env: {} },
    {
      name: "gateway",
      port: gatewayGrpcPort,
      env: { PORT: String(config.PORT), HOST: config.HOST, BOOTSTRAP_API_KEY: apiKey },
    },
  ];
  const envOf = (s: (typeof services)[number], infra: { NATS_URL: string; DATABASE_URL: string }) => ({
    ...common,
    ...infra,
    GRPC_PORT: String(s.port),
    METRICS_PORT: String(metricsPort[s.name]),
    ...s.env,
  });
  // Stand-ins for the addresses of the NATS and Postgres the stack starts itself, which do not run yet.
  const notYetStarted = {
    NATS_URL: config.NATS_URL ?? `nats://127.0.0.1:${natsPort}`,
    DATABASE_URL: config.DATABASE_URL ?? `postgres://postgres@127.0.0.1:${pgPort}/bas`,
  };
  const problems = checkServiceEnvs(Object.fromEntries(services.map((s) => [s.name, envOf(s, notYetStarted)])));
  if (problems.length > 0) {
    throw new ConfigError(`cannot start, the configuration is wrong:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }

  const supervisor = createSupervisor({
    root: ROOT,
    logDir,
    onEvent: say,
    onConfigError(name, lastLines) {
      complain(`${name} refused its configuration:\n${lastLines.map((l) => `    ${l}`).join("\n")}`);
      void shutdown("configuration error", 1);
    },
  });
  // Stop steps run last-pushed first: the services stop before NATS and Postgres, whichever runs them.
  const stopServices = () => supervisor.stopAll(runtime ? [...SHUTDOWN_ORDER, "nats", "postgres"] : SHUTDOWN_ORDER);
  killSteps.push(() => supervisor.pids().forEach(killProcess));
  const ports = { nats: natsPort, postgres: pgPort };
  let infra: { NATS_URL: string; DATABASE_URL: string };
  if (runtime) {
    stopSteps.push(() => runtime.removeAll(), stopServices);
    killSteps.push(() => void runtime.removeAll());
    infra = await startInfraContainers(runtime, supervisor, config, ports);
  } else {
    infra = await startInfraProcesses(config, dataDir, logDir, ports);
    stopSteps.push(stopServices);
  }
  if (shuttingDown) return;

  for (const s of services) {
    const env = envOf(s, infra);
    const name = s.name as Target;
    supervisor.start({ name, entry: `services/${name}/src/main.ts`, env, command: runtime?.command(name, env) });
  }

  // Where everything runs, for the command line (`npx bas` reads it).
  const metricsAddresses = Object.fromEntries(
    SHUTDOWN_ORDER.map((name) => [`${name.toUpperCase().replace("-", "_")}_METRICS_ADDR`, addr(metricsPort[name])]),
  );
  const published: NodeJS.ProcessEnv = {
    ...common,
    ...infra,
    GATEWAY_ADDR: addr(gatewayGrpcPort),
    SMTP_ADDR: `${process.env.SMTP_HOST || "127.0.0.1"}:${smtpPort}`,
    ...metricsAddresses,
  };
  const addresses = [
    "NATS_URL",
    "DATABASE_URL",
    "NAMESPACE",
    "GATEWAY_ADDR",
    "SESSIONS_ADDR",
    "BROWSER_POOL_ADDR",
    "RUNNER_ADDR",
    "BILLING_ADDR",
    "SMTP_ADDR",
    ...Object.keys(metricsAddresses),
  ];
  writePrivateFile(join(dataDir, "stack.env"), addresses.map((name) => `${name}=${published[name]}\n`).join(""));
  say(`starting (logs in ${logDir}) ...`);
  try {
    await waitForHealthy(publicUrl, apiKey, 120_000);
  } catch (err) {
    complain((err as Error).message);
    await shutdown("not healthy", 1);
  }
  supervisor.started();
  say(banner({ publicUrl, apiKey, dataDir, modelConfigured: Boolean(config.LLM_BASE_URL || config.MODEL_ROUTES) }));
}

type Ports = { nats: number; postgres: number };
type Infra = { NATS_URL: string; DATABASE_URL: string };

/**
 * NATS and Postgres as processes of this machine, supervised like the services: one that dies is started again on the
 * same data and port, and the services reconnect to it.
 */
async function startInfraProcesses(config: StackConfig, dataDir: string, logDir: string, ports: Ports): Promise<Infra> {
  const natsLog = createWriteStream(join(logDir, "nats.log"), { flags: "a", mode: 0o600 });
  const infraStarting = Promise.allSettled([
    config.NATS_URL
      ? undefined
      : superviseServer({
          name: "nats",
          start: () =>
            startNatsServer({ dataDir: join(dataDir, "nats"), port: ports.nats, detached: true, log: natsLog }),
          onEvent: say,
        }),
    config.DATABASE_URL
      ? undefined
      : superviseServer({
          name: "postgres",
          start: () => startPostgres({ dataDir: join(dataDir, "postgres"), database: "bas", port: ports.postgres }),
          onEvent: say,
        }),
  ]);
  // A signal during start-up waits for NATS and Postgres to be up, then stops them.
  stopSteps.push(async () => {
    for (const started of await infraStarting) if (started.status === "fulfilled") await started.value?.stop();
    natsLog.end();
  });
  const [natsStart, pgStart] = await infraStarting;
  killSteps.push(() => {
    for (const started of [natsStart, pgStart]) {
      if (started.status === "fulfilled" && started.value) killProcess(started.value.current().pid);
    }
  });
  for (const started of [natsStart, pgStart]) if (started.status === "rejected") throw started.reason;
  const nats = natsStart.status === "fulfilled" ? natsStart.value : undefined;
  const pg = pgStart.status === "fulfilled" ? pgStart.value : undefined;
  return {
    NATS_URL: config.NATS_URL ?? nats!.current().url,
    DATABASE_URL: config.DATABASE_URL ?? pg!.current().url,
  };
}

/** NATS and Postgres as containers of their images (their data in volumes), restarted by the supervisor. */
async function startInfraContainers(
  runtime: ContainerRuntime,
  supervisor: Supervisor,
  config: StackConfig,
  ports: Ports,
): Promise<Infra> {
  const waits: Promise<void>[] = [];
  if (!config.NATS_URL) {
    const env = { NATS_PORT: String(ports.nats) };
    supervisor.start({ name: "nats", entry: "", env, command: runtime.command("nats", env) });
    waits.push(waitForPort(ports.nats, 60_000, "NATS's container"));
  }
  if (!config.DATABASE_URL) {
    const env = { PGPORT: String(ports.postgres) };
    supervisor.start({ name: "postgres", entry: "", env, command: runtime.command("postgres", env) });
    // Only the final server listens on TCP: a first start's initdb does not.
    waits.push(waitForPort(ports.postgres, 120_000, "Postgres's container"));
  }
  await Promise.all(waits);
  return {
    NATS_URL: config.NATS_URL ?? `nats://127.0.0.1:${ports.nats}`,
    DATABASE_URL: config.DATABASE_URL ?? `postgres://postgres@127.0.0.1:${ports.postgres}/bas`,
  };
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof AlreadyRunningError) complain(`local stack: ${err.message}`);
  else complain(`local stack: ${(err as Error)?.stack ?? String(err)}`);
  void shutdown("could not start", 1);
});
