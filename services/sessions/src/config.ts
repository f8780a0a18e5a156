import { commonEnv, envPort, loadConfig } from "@bas/service-kit";
import { z } from "zod";

/** AES-256 needs 32 bytes: 64 hex characters or base64 of 32 bytes. */
const secretsKey = z.string().transform((value, ctx) => {
  const bytes = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, "hex") : Buffer.from(value, "base64");
  if (bytes.length !== 32) {
    ctx.addIssue({ code: "custom", message: "expected 32 bytes as 64 hex characters or base64" });
    return z.NEVER;
  }
  return bytes;
});

const sessionsEnv = {
  ...commonEnv,
  GRPC_PORT: envPort(50051),
  /** Base of the live view URL every session gets at creation (`<PUBLIC_URL>/live/<id>`). */
  PUBLIC_URL: z
    .string()
    .url()
    .default("http://127.0.0.1:8080")
    .transform((u) => u.replace(/\/+$/, "")),
  /** An idle (or never started) session without activity this long is timed out. */
  SESSION_INACTIVITY_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(15 * 60 * 1000),
  /** Sessions a project may have in created, idle or running at once. */
  MAX_ACTIVE_SESSIONS_PER_PROJECT: z.coerce.number().int().positive().default(25),
  /**
   * An ended session shows its terminal status once its browser's last usage is priced, so its costs are final; if
   * browser-pool or billing is down that long, it shows the status anyway (costs then follow when they can).
   */
  FINAL_COSTS_WAIT_MS: z.coerce.number().int().min(0).default(30_000),
  /** Encrypts sensitiveData values at rest; required, so no deployment runs with a made-up key. */
  SECRETS_KEY: secretsKey,
};

export type SessionsConfig = ReturnType<typeof loadSessionsConfig>;

export function loadSessionsConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(sessionsEnv, env);
}
