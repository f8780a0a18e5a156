import { ConfigError, commonEnv, envPort, loadConfig } from "@bas/service-kit";
import { parseEgressRules } from "@bas/egress-policy";
import { z } from "zod";
import { readTlsPair } from "./adapters/smtp/smtp-tls";

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
  /** Port of `/metrics` (Prometheus), on GRPC_HOST; 0 picks a free one. */
  METRICS_PORT: envPort(9461),
  /** Base of the live view URL every session gets at creation (`<PUBLIC_URL>/live/sessions/<id>/<token>`). */
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
  /** Encrypts sensitiveData values and webhook secrets at rest; required, so no deployment runs with a made-up key. */
  SECRETS_KEY: secretsKey,
  /**
   * Closed addresses (loopback, private, link-local...) webhook endpoints may still use, as `host[:port]` or CIDR
   * entries separated by commas (like BROWSER_EGRESS_ALLOW); everything public is open.
   */
  WEBHOOK_EGRESS_ALLOW: z
    .string()
    .default("")
    .transform((value, ctx) => {
      try {
        return parseEgressRules(value);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /** A failed delivery is tried again after this long, doubling up to WEBHOOK_RETRY_MAX_MS... */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().positive().default(5_000),
  WEBHOOK_RETRY_MAX_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(60 * 60 * 1000),
  /** ...until this long after the event; then it is given up (failed). */
  WEBHOOK_RETRY_FOR_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(24 * 60 * 60 * 1000),
  /** Most bytes the files of one workspace may take together (default 1 GiB). */
  WORKSPACE_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 ** 3),
  /**
   * Most workspaces one project may keep (its default workspace is always made): with WORKSPACE_MAX_BYTES, what a
   * project can store in all.
   */
  MAX_WORKSPACES_PER_PROJECT: z.coerce.number().int().positive().default(100),
  /** How long an endpoint has to answer a delivery. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /**
   * The temporary mailboxes' SMTP receiver (docs/mailbox.md): its port (0 picks a free one), unprivileged by default;
   * MX records point port 25 at it through a load balancer or a port mapping.
   */
  SMTP_PORT: envPort(2525),
  /** Where the SMTP receiver listens; 0.0.0.0 to take mail from outside the host (Kubernetes: set by the chart). */
  SMTP_HOST: z.string().default("127.0.0.1"),
  /** The domain of the mailbox addresses (`<random>@MAIL_DOMAIN`): the domain whose MX records point here. */
  MAIL_DOMAIN: z
    .string()
    .regex(
      /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i,
      "expected a domain",
    )
    .default("localhost")
    .transform((d) => d.toLowerCase()),
  /** The largest mail taken, in bytes (default 10 MiB); bigger ones are refused with 552. */
  SMTP_MAX_MESSAGE_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024),
  /**
   * The SMTP receiver's certificate (PEM, its chain first) and key, for the MX host's name: with both, STARTTLS is
   * offered and senders that can encrypt do. Read again when they change (renewals).
   */
  SMTP_TLS_CERT_FILE: z.string().optional(),
  SMTP_TLS_KEY_FILE: z.string().optional(),
};

const tlsVariables = "SMTP_TLS_CERT_FILE, SMTP_TLS_KEY_FILE";

export type SessionsConfig = ReturnType<typeof loadSessionsConfig>;

export function loadSessionsConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(sessionsEnv, env);
  const { SMTP_TLS_CERT_FILE: certFile, SMTP_TLS_KEY_FILE: keyFile } = config;
  if (!certFile !== !keyFile) {
    throw ConfigError.of(tlsVariables, "give both (STARTTLS) or neither (plain SMTP)");
  }
  const smtpTls = certFile && keyFile ? { certFile, keyFile } : undefined;
  if (smtpTls) {
    try {
      readTlsPair(smtpTls);
    } catch (err) {
      throw ConfigError.of(tlsVariables, (err as Error).message);
    }
  }
  return { ...config, smtpTls };
}
