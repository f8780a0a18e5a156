import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { freePort } from "@bas/embedded-infra";
import { checkGrpcHealth } from "@bas/service-kit";
import type { benchInfra } from "./infra";
import { startServiceProcess, waitUntil } from "./processes";

/**
 * The read path as deployed: the sessions service and gateways over it, each its own process, on the benchmark's
 * NATS and Postgres. `stop` ends them in reverse order.
 */
export async function startReadPath(infra: Awaited<ReturnType<typeof benchInfra>>) {
  const common = {
    NATS_URL: infra.natsUrl,
    DATABASE_URL: infra.databaseUrl,
    NAMESPACE: `bench${randomBytes(4).toString("hex")}`,
    LOG_LEVEL: "warn",
    // Several gateways run at once: each takes a free metrics port.
    METRICS_PORT: "0",
    SMTP_PORT: "0",
  };
  const key = `bas_bench_${randomBytes(16).toString("hex")}`;
  const sessionsPort = await freePort();
  const children: ChildProcess[] = [];
  const stop = async () => {
    for (const child of children.reverse()) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  };
  try {
    children.push(
      startServiceProcess("sessions", "services/sessions/src/main.ts", {
        ...common,
        GRPC_PORT: String(sessionsPort),
        SECRETS_KEY: randomBytes(32).toString("hex"),
        MAX_ACTIVE_SESSIONS_PER_PROJECT: "10000",
      }),
    );
    await waitUntil("sessions", () => checkGrpcHealth(`127.0.0.1:${sessionsPort}`));
  } catch (err) {
    await stop();
    throw err;
  }

  /** A gateway (no rate limit) with the bench's API key; its base URL and admin gRPC port once it answers. */
  async function startGateway(name: string, env: Record<string, string> = {}) {
    const port = await freePort();
    const adminPort = await freePort();
    children.push(
      startServiceProcess(name, "services/gateway/src/main.ts", {
        ...common,
        PORT: String(port),
        HOST: "127.0.0.1",
        GRPC_PORT: String(adminPort),
        SESSIONS_ADDR: `127.0.0.1:${sessionsPort}`,
        BOOTSTRAP_API_KEY: key,
        BLOB_SIGNING_KEY: randomBytes(32).toString("hex"),
        RATE_LIMIT_REQUESTS: "0",
        ...env,
      }),
    );
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(name, async () => (await fetch(`${url}/api/v4/openapi.json`)).ok);
    return { url, adminPort };
  }

  return { key, sessionsPort, startGateway, stop };
}
