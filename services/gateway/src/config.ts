import { commonEnv, envPort, grpcTarget, loadConfig } from "@bas/service-kit";
import { z } from "zod";

// An empty variable means "not set", as in most deployment tools.
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === "" ? undefined : v), schema.optional());

export const gatewayEnv = {
  ...commonEnv,
  /** HTTP port of the REST API; 0 picks a free one. */
  PORT: envPort(8080),
  HOST: z.string().default("0.0.0.0"),
  /** gRPC port of the ProjectAdmin service. */
  GRPC_PORT: envPort(50050),
  /** Port of `/metrics` (Prometheus), on GRPC_HOST, never on the public one; 0 picks a free one. */
  METRICS_PORT: envPort(9460),
  /** Public base URL of the REST API, used in presigned blob URLs; default http://127.0.0.1:<PORT>. */
  PUBLIC_URL: optional(z.url().transform((u) => u.replace(/\/+$/, ""))),
  /** Made valid for the default project at start. */
  BOOTSTRAP_API_KEY: optional(
    z.string().regex(/^bas_[\x21-\x7e]{16,196}$/, "must start with bas_ and have at least 16 more characters"),
  ),
  SESSIONS_ADDR: optional(grpcTarget),
  BROWSER_POOL_ADDR: optional(grpcTarget),
  /** How many browser-pool replicas BROWSER_POOL_ADDR reaches: a create a full one refuses is tried on that many. */
  BROWSER_POOL_REPLICAS: z.coerce.number().int().min(1).max(100).default(1),
  RUNNER_ADDR: optional(grpcTarget),
  BILLING_ADDR: optional(grpcTarget),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(1_048_576),
  /** HMAC key of presigned blob URLs; shared by every gateway replica. Random per process when unset. */
  BLOB_SIGNING_KEY: optional(z.string().min(32, "at least 32 characters")),
  API_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(5_000),
  /**
   * Session reads and run statuses are cached until the session changes; this bounds staleness if a notice is lost
   * (an ended run's status, which never changes again, is kept regardless). 0 turns the cache off.
   */
  SESSION_CACHE_TTL_MS: z.coerce.number().int().min(0).default(10_000),
  /** Path to a JSON model catalog; default the built-in 21 models. */
  MODEL_CATALOG: optional(z.string()),
  /** Requests per project and window on each gateway replica (429 with Retry-After beyond it); 0 = no limit. */
  RATE_LIMIT_REQUESTS: z.coerce.number().int().min(0).default(0),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(3600).default(1),
  /** Deadline of calls to other services. */
  GRPC_DEADLINE_MS: z.coerce.number().int().min(100).default(10_000),
};

export type GatewayConfig = z.infer<z.ZodObject<typeof gatewayEnv>>;

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return loadConfig(gatewayEnv, env);
}
