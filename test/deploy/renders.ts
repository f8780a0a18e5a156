import { generate } from "selfsigned";
import type { ChartOptions } from "./support/chart";

/**
 * The value sets the chart is checked with: the minimal install (the two required values), a production-like one
 * (ci/production-values.yaml: TLS, keys in existing Secrets, more replicas, monitoring, narrowed peers), and one
 * with the in-cluster Postgres and a single NATS server.
 */
export const RENDERS: Record<string, ChartOptions> = {
  minimal: {
    release: "bas",
    namespace: "bas",
    set: { "ingress.host": "agents.test", "postgres.url": "postgres://bas:secret@db.test:5432/bas" },
  },
  production: { release: "agents", namespace: "agents-prod", valuesFiles: ["ci/production-values.yaml"] },
  "in-cluster": {
    release: "trial",
    namespace: "trial",
    set: { "ingress.host": "trial.test", "postgres.internal.enabled": "true", "nats.replicas": "1" },
  },
};

/**
 * Stand-ins for the Secrets the production values only name (secrets.existingSecret, postgres.existingSecret,
 * mailbox.tls.secretName), the MX host's certificate made afresh.
 */
export async function externalSecrets(): Promise<Record<string, Record<string, string>>> {
  const mx = await generate([{ name: "commonName", value: "mx.agents.example.com" }], { keyType: "ec" });
  return { ...EXTERNAL_KEYS, "mx-tls": { "tls.crt": mx.cert, "tls.key": mx.private } };
}

const EXTERNAL_KEYS: Record<string, Record<string, string>> = {
  "bas-keys": {
    SECRETS_KEY: "ab".repeat(32),
    BLOB_SIGNING_KEY: "x".repeat(48),
    BOOTSTRAP_API_KEY: `bas_${"k".repeat(32)}`,
    PROVIDER_KEY_SECRET: Buffer.alloc(32, 7).toString("base64"),
    LLM_API_KEY: "sk-test",
  },
  "bas-database": { url: "postgres://bas:secret@db.internal:5432/bas" },
};

/** The five services, by the component label and container name the chart gives them. */
export const SERVICES = ["gateway", "sessions", "browser-pool", "runner", "billing"] as const;
