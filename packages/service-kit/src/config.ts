import { z } from "zod";

/** The environment did not validate; the message names every variable that is wrong. */
export class ConfigError extends Error {
  override name = "ConfigError";

  /** One variable (or variables read together, "A, B") that is wrong, worded as `loadConfig` words its problems. */
  static of(variable: string, why: string): ConfigError {
    return invalidConfiguration([`${variable}: ${why}`]);
  }
}

const invalidConfiguration = (problems: string[]) =>
  new ConfigError(`invalid configuration:\n  ${problems.join("\n  ")}`);

/** Parses the environment with a schema whose keys are variable names. The only reader of `process.env`. */
export function loadConfig<S extends z.ZodRawShape>(
  shape: S,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<z.ZodObject<S>> {
  const result = z.object(shape).safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw invalidConfiguration(problems);
  }
  return result.data;
}

const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

/** Variables every service reads. */
export const commonEnv = {
  NATS_URL: z
    .string()
    .regex(/^(nats|tls|wss?):\/\/\S+$/, "expected a nats:// URL")
    .default("nats://127.0.0.1:4222"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/, "expected a postgres:// URL")
    .default("postgres://postgres@127.0.0.1:5432/bas"),
  NAMESPACE: z
    .string()
    .regex(/^[a-zA-Z0-9_-]+$/, "letters, digits, - and _ only")
    .default("bas"),
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  GRPC_HOST: z.string().default("127.0.0.1"),
  /**
   * JetStream replicas of the streams and buckets a service creates: 3 on a 3-server cluster, so the data outlives a
   * server. Applied when a stream is created or updated; a bucket keeps the count it was created with.
   */
  NATS_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
};

export const envPort = port;

/** A variable holding JSON, checked against `schema`; absent or blank, it is `empty`. */
export const jsonEnv = <T extends z.ZodType>(schema: T, empty: unknown) =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (!raw?.trim()) return empty;
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        ctx.addIssue({ code: "custom", message: "expected JSON" });
        return z.NEVER;
      }
    })
    .pipe(schema);

/**
 * Where a gRPC client finds a service: `host:port`, `dns:///host:port` (every address the name resolves to, such as a
 * Kubernetes headless Service's pods) or `ipv4:ip:port,ip:port`; calls to the last two are spread over their addresses
 * round robin (grpc-client.ts).
 */
export const grpcTarget = z
  .string()
  .regex(
    /^(dns:\/\/\/)?[^\s/,]+:\d{1,5}$|^ipv4:[\d.]+:\d{1,5}(,[\d.]+:\d{1,5})*$/,
    "expected host:port, dns:///host:port or ipv4:ip:port,ip:port",
  );
