import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { freePort } from "@bas/embedded-infra";

export const SERVICE_NAMES = ["billing", "sessions", "browser-pool", "runner", "gateway"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** The info line each service logs once it serves. */
export const READY_MESSAGES: Record<ServiceName, string> = {
  billing: "billing started",
  sessions: "sessions service ready",
  "browser-pool": "browser-pool ready",
  runner: "runner started",
  gateway: "gateway listening",
};

/** One value per service. */
const byService = <T>(value: (name: ServiceName) => T) =>
  Object.fromEntries(SERVICE_NAMES.map((name) => [name, value(name)])) as Record<ServiceName, T>;

export interface StackEnvs {
  /** Each service's environment, as `npm start` (or the chart) gives it. */
  env: Record<ServiceName, Record<string, string>>;
  /** `127.0.0.1:<GRPC_PORT>` of each. */
  grpc: Record<ServiceName, string>;
  baseUrl: string;
  apiKey: string;
}

/**
 * The environments of the five services of one stack on the given NATS, database and namespace, on free ports of
 * loopback, with throwaway keys; browsers keep their profiles under `dataDir`.
 */
export async function stackEnvs(infra: {
  natsUrl: string;
  databaseUrl: string;
  namespace: string;
  dataDir: string;
}): Promise<StackEnvs> {
  const [http, cdp, ...free] = await Promise.all(Array.from({ length: 2 + SERVICE_NAMES.length }, () => freePort()));
  const grpcPort = (name: ServiceName) => free[SERVICE_NAMES.indexOf(name)];
  const grpc = byService((name) => `127.0.0.1:${grpcPort(name)}`);
  const baseUrl = `http://127.0.0.1:${http}`;
  const apiKey = `bas_${randomBytes(16).toString("hex")}`;
  const common = {
    NATS_URL: infra.natsUrl,
    DATABASE_URL: infra.databaseUrl,
    NAMESPACE: infra.namespace,
    GRPC_HOST: "127.0.0.1",
    PUBLIC_URL: baseUrl,
    SESSIONS_ADDR: grpc.sessions,
    BROWSER_POOL_ADDR: grpc["browser-pool"],
    RUNNER_ADDR: grpc.runner,
    BILLING_ADDR: grpc.billing,
    SECRETS_KEY: randomBytes(32).toString("hex"),
    BLOB_SIGNING_KEY: randomBytes(32).toString("hex"),
    PROVIDER_KEY_SECRET: randomBytes(32).toString("hex"),
    XDG_CONFIG_HOME: join(infra.dataDir, "xdg", "config"),
    XDG_CACHE_HOME: join(infra.dataDir, "xdg", "cache"),
    // Any free port: several stacks (and replicas) run at once.
    METRICS_PORT: "0",
  };
  const own: Record<ServiceName, Record<string, string>> = {
    billing: {},
    // Any free port for the temporary mailboxes' SMTP receiver, as for metrics.
    sessions: { SMTP_PORT: "0" },
    "browser-pool": {
      CDP_PORT: String(cdp),
      CDP_HOST: "127.0.0.1",
      WARM_POOL_SIZE: "0",
      NODE_ID: `n${randomBytes(4).toString("hex")}`,
      BROWSER_DATA_DIR: join(infra.dataDir, "browsers"),
    },
    runner: {},
    gateway: { PORT: String(http), HOST: "127.0.0.1", BOOTSTRAP_API_KEY: apiKey },
  };
  const env = byService((name) => ({
    ...common,
    GRPC_PORT: String(grpcPort(name)),
    ...own[name],
  }));
  return { env, grpc, baseUrl, apiKey };
}
