import { createWriteStream } from "node:fs";
import { isIP } from "node:net";
import { join, resolve } from "node:path";
import { ConfigError } from "@bas/service-kit";
import { freePort, postgresUser, startNatsServer, startPostgres } from "@bas/embedded-infra";
import { loadStackConfig } from "./config";
import { checkPrerequisites } from "./prerequisites";
import { secureDataDir, writePrivateFile } from "./private-files";
import { loadOrCreateSecrets } from "./secrets";
import { superviseServer } from "./supervised-server";
import { createSupervisor } from "./supervisor";
import { waitForHealthy } from "./wait-for-healthy";

const ROOT = resolve(__dirname, "../../..");
/** Stopped in this order: no new traffic first, then hand back work, then the state owners; NATS and Postgres last. */
const SHUTDOWN_ORDER = ["gateway", "runner", "sessions", "browser-pool", "billing"];

const say = (msg: string) => process.stdout.write(`${msg}\n`);

async function main() {
  const config = loadStackConfig();
  const prerequisites = checkPrerequisites(config);
  if (prerequisites.missing.length > 0) {
    const lines = prerequisites.missing.map((line) => `  - ${line}`).join("\n");
    process.stderr.write(`local stack: cannot start, this machine lacks what it needs:\n${lines}\n`);
    process.exit(1);
  }
  const dataDir = config.DATA_DIR;
  const logDir = join(dataDir, "logs");
  secureDataDir(dataDir, { logDir, postgresGroup: config.DATABASE_URL ? undefined : postgresUser()?.gid });

  // NATS and Postgres are supervised like the services: one that dies is started again on the same data and port,
  // and the services reconnect to it.
  const [natsPort, pgPort] = await Promise.all([freePort(), freePort()]);
  const natsLog = createWriteStream(join(logDir, "nats.log"), { flags: "a", mode: 0o600 });
  const [natsStart, pgStart] = await Promise.allSettled([
    config.NATS_URL
      ? undefined
      : superviseServer({
          name: "nats",
          start: () =>
            startNatsServer({ dataDir: join(dataDir, "nats"), port: natsPort, detached: true, log: natsLog }),
          onEvent: say,
        }),
    config.DATABASE_URL
      ? undefined
      : superviseServer({
          name: "postgres",
          start: () => startPostgres({ dataDir: join(dataDir, "postgres"), database: "bas", port: pgPort }),
          onEvent: say,
        }),
  ]);
  const nats = natsStart.status === "fulfilled" ? natsStart.value : undefined;
  const pg = pgStart.status === "fulfilled" ? pgStart.value : undefined;
  const stopInfra = async () => {
    await nats?.stop();
    await pg?.stop();
    natsLog.end();
  };
  for (const started of [natsStart, pgStart]) {
    if (started.status === "rejected") {
      await stopInfra();
      throw started.reason;
    }
  }
  const natsUrl = config.NATS_URL ?? nats!.current().url;
  const databaseUrl = config.DATABASE_URL ?? pg!.current().url;

  const secrets = loadOrCreateSecrets(dataDir);
  const apiKey = config.BOOTSTRAP_API_KEY ?? secrets.apiKey;
  const [sessionsPort, browserPoolPort, runnerPort, billingPort, gatewayGrpcPort, cdpPort, metricsPort] =
    await Promise.all(Array.from({ length: 7 }, () => freePort()));
  const publicUrl = `http://${config.HOST}:${config.PORT}`;
  const addr = (port: number) => `127.0.0.1:${port}`;

  const common: NodeJS.ProcessEnv = {
    ...process.env,
    NATS_URL: natsUrl,
    DATABASE_URL: databaseUrl,
    NAMESPACE: config.NAMESPACE,
    LOG_LEVEL: config.LOG_LEVEL,
    GRPC_HOST: "127.0.0.1",
    PUBLIC_URL: publicUrl,
    SESSIONS_ADDR: addr(sessionsPort),
    BROWSER_POOL_ADDR: addr(browserPoolPort),
    RUNNER_ADDR: addr(runnerPort),
    BILLING_ADDR: addr(billingPort),
    SECRETS_KEY: process.env.SECRETS_KEY ?? secrets.secretsKey,
    BLOB_SIGNING_KEY: process.env.BLOB_SIGNING_KEY ?? secrets.blobSigningKey,
    PROVIDER_KEY_SECRET: process.env.PROVIDER_KEY_SECRET ?? secrets.providerKeySecret,
    XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME ?? join(dataDir, "xdg", "config"),
    XDG_CACHE_HOME: process.env.XDG_CACHE_HOME ?? join(dataDir, "xdg", "cache"),
  };
  const services = [
    { name: "billing", port: billingPort, env: { METRICS_PORT: String(metricsPort) } },
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
        BROWSER_EGRESS_DENY: [config.PORT, sessionsPort, runnerPort, billingPort, gatewayGrpcPort, cdpPort, metricsPort]
          .flatMap((port) => [`127.0.0.1:${port}`, ...(isIP(config.HOST) ? [`[${config.HOST}]:${port}`] : [])])
          .join(","),
      },
    },
    { name: "sessions", port: sessionsPort, env: {} },
    { name: "runner", port: runnerPort, env: {} },
    {
      name: "gateway",
      port: gatewayGrpcPort,
      env: { PORT: String(config.PORT), HOST: config.HOST, BOOTSTRAP_API_KEY: apiKey },
    },
  ];

  const supervisor = createSupervisor({ root: ROOT, logDir, onEvent: say });
  let shuttingDown = false;
  const shutdown = async (reason: string, exitCode = 0) => {
    if (shuttingDown) return;
    shuttingDown = true;
    say(`\n${reason}: stopping services...`);
    await supervisor.stopAll(SHUTDOWN_ORDER);
    await stopInfra();
    say("stopped.");
    process.exit(exitCode);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));

  for (const s of services) {
    supervisor.start({
      name: s.name,
      entry: `services/${s.name}/src/main.ts`,
      env: { ...common, GRPC_PORT: String(s.port), ...s.env },
    });
  }

  // Where everything runs, for the command-line tools: `set -a; . DATA_DIR/stack.env; set +a`.
  const envFile = join(dataDir, "stack.env");
  writePrivateFile(
    envFile,
    ["NATS_URL", "DATABASE_URL", "NAMESPACE", "SESSIONS_ADDR", "BROWSER_POOL_ADDR", "RUNNER_ADDR", "BILLING_ADDR"]
      .map((name) => `${name}=${common[name]}`)
      .join("\n")
      .concat("\n"),
  );
  say(`starting (logs in ${logDir}) ...`);
  try {
    await waitForHealthy(`${publicUrl}/healthz`, 120_000);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    await shutdown("not healthy", 1);
  }
  say(
    [
      "",
      "Browser agent service is up.",
      `  base URL:  ${publicUrl}`,
      `  API key:   ${apiKey}`,
      `  API docs:  ${publicUrl}/api/v3/docs`,
      `  data:      ${dataDir}`,
      `  CLI env:   set -a; . ${envFile}; set +a   (then: npm run cli -- projects list)`,
      "",
      "Try it:",
      `  curl -s -H 'X-Service-API-Key: ${apiKey}' -H 'Content-Type: application/json' \\`,
      `    -d '{"task":"Open example.com and tell me its title"}' ${publicUrl}/api/v3/sessions`,
      "",
      "Ctrl-C stops everything.",
    ].join("\n"),
  );
}

main().catch((err: unknown) => {
  const message = err instanceof ConfigError ? err.message : ((err as Error)?.stack ?? String(err));
  process.stderr.write(`local stack: ${message}\n`);
  process.exit(1);
});
