import { commonEnv, envPort, grpcTarget, jsonEnv, loadConfig } from "@bas/service-kit";
import { z } from "zod";
import { modelRoutesSchema } from "./domain/model-routes";

/** AES-256 needs 32 bytes: 64 hex characters or base64 of 32 bytes. */
const key32 = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (!value) return undefined;
    const bytes = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, "hex") : Buffer.from(value, "base64");
    if (bytes.length !== 32) {
      ctx.addIssue({ code: "custom", message: "expected 32 bytes as 64 hex characters or base64" });
      return z.NEVER;
    }
    return bytes;
  });

const int = (fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

export const runnerEnv = {
  ...commonEnv,
  GRPC_PORT: envPort(50053),
  /** Port of `/metrics` (Prometheus), on GRPC_HOST; 0 picks a free one. */
  METRICS_PORT: envPort(9463),
  /**
   * The default model route: any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, a gateway...). None by default:
   * without it (and without a MODEL_ROUTES entry with a baseUrl) a task is refused at creation.
   */
  LLM_BASE_URL: z.preprocess((v) => (v === "" ? undefined : v), z.string().url().optional()),
  LLM_API_KEY: z.string().optional(),
  /** One provider model for every model value on the default route (e.g. a local server with one model). */
  LLM_MODEL: z.string().min(1).optional(),
  /** JSON: model value (or "*") → {baseUrl?, model?, apiKey?, provider?, vision?, reasoning?, toolChoice?}. */
  MODEL_ROUTES: jsonEnv(modelRoutesSchema, {}),
  /** Path of a JSON model catalog (see @bas/models); default: the built-in one. */
  MODEL_CATALOG: z.string().optional(),
  LLM_TIMEOUT_MS: int(120_000),
  /** Retries of a failed model call (connection errors, 408/409/429/5xx; Retry-After is honoured). */
  LLM_MAX_RETRIES: int(4, 0, 20),
  SESSIONS_ADDR: grpcTarget.default("127.0.0.1:50051"),
  BROWSER_POOL_ADDR: grpcTarget.default("127.0.0.1:50052"),
  /** How many browser-pool replicas BROWSER_POOL_ADDR reaches: a browser a full one refuses is asked of that many. */
  BROWSER_POOL_REPLICAS: int(1, 1, 100),
  /** Absent or empty: no budget check before model calls. */
  BILLING_ADDR: z
    .string()
    .optional()
    .transform((v) => (v?.trim() ? v.trim() : undefined))
    .pipe(grpcTarget.optional()),
  /** Tasks one runner process works at once. */
  RUNNER_CONCURRENCY: int(2, 1, 64),
  /** Model calls (steps) one task may take before it ends unsuccessfully. */
  MAX_STEPS: int(50, 1, 1_000),
  /** Attempts per task; a task whose runner died is retried until then, then failed. */
  MAX_ATTEMPTS: int(3, 1, 20),
  /**
   * How long any one dependency (browser-pool, sessions, billing, NATS, Postgres) may be unavailable before the work
   * waiting for it fails: a shorter outage delays tasks and fails none.
   */
  OUTAGE_GRACE_SECONDS: int(60, 1, 3_600),
  /** Without a heartbeat for this long a task is considered abandoned and redelivered. */
  TASK_ACK_WAIT_MS: int(30_000, 1_000),
  /** Characters of page content per observation (~4 characters per token). */
  OBSERVE_MAX_CHARS: int(40_000, 2_000),
  /** How often a non-conforming structured answer is sent back to the model. */
  SCHEMA_RETRIES: int(2, 0, 10),
  /**
   * When the runner is root, the unprivileged user code-mode scripts run as (inside their sandbox; no passwd entry
   * needed).
   */
  CODE_MODE_UID: int(199_999, 1_000, 4_000_000_000),
  CODE_MODE_TIMEOUT_MS: int(120_000, 1_000),
  /** Encrypts projects' own provider keys at rest (use_own_key); without it keys cannot be stored. */
  PROVIDER_KEY_SECRET: key32,
  /** Store a screenshot per step in the blob store (false: none, lighter steps). */
  STEP_SCREENSHOTS: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
};

export type RunnerConfig = ReturnType<typeof loadRunnerConfig>;

export function loadRunnerConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(runnerEnv, env);
}
