import { randomBytes } from "node:crypto";
import { gateway } from "@bas/proto";
import { connectClient } from "@bas/service-kit";
import { loadGatewayConfig } from "../../../gateway/src/config";
import { type GatewayService, startGatewayService } from "../../../gateway/src/service";
import type { BrowserPoolServiceDeps } from "../../src/service";
import { type PoolHarness, startPoolHarness } from "./pool-harness";

export interface Reply {
  status: number;
  body: any;
}

export interface RestStack {
  pool: PoolHarness;
  gateway: GatewayService;
  baseUrl: string;
  /** A key of a fresh project. */
  newProjectKey(): Promise<string>;
  request(
    method: string,
    path: string,
    options?: { key?: string | null; body?: unknown; raw?: string },
  ): Promise<Reply>;
  close(): Promise<void>;
}

/** Browser-pool and the real gateway in front of it, on the test's own namespace and database. */
export async function startRestStack(
  poolEnv: Record<string, string> = {},
  poolDeps: BrowserPoolServiceDeps = {},
  gatewayEnv: Record<string, string> = {},
): Promise<RestStack> {
  const pool = await startPoolHarness(poolEnv, poolDeps);
  const bootstrapKey = `bas_test_${randomBytes(16).toString("hex")}`;
  const gw = await startGatewayService(
    loadGatewayConfig({
      NATS_URL: pool.env.NATS_URL,
      DATABASE_URL: pool.env.DATABASE_URL,
      NAMESPACE: pool.env.NAMESPACE,
      LOG_LEVEL: "silent",
      GRPC_PORT: "0",
      METRICS_PORT: "0",
      PORT: "0",
      HTTP_HOST: "127.0.0.1",
      BOOTSTRAP_API_KEY: bootstrapKey,
      BLOB_SIGNING_KEY: randomBytes(32).toString("hex"),
      BROWSER_POOL_ADDR: `127.0.0.1:${pool.service.grpcPort}`,
      ...gatewayEnv,
    }),
  );
  const baseUrl = `http://127.0.0.1:${gw.port}`;
  const admin = connectClient(gateway.ProjectAdminClient, `127.0.0.1:${gw.grpcPort}`);
  return {
    pool,
    gateway: gw,
    baseUrl,
    async newProjectKey() {
      const project = await admin.createProject({ name: `p-${randomBytes(4).toString("hex")}` });
      return (await admin.createApiKey({ projectId: project.id, label: "" })).plainKey;
    },
    async request(method, path, options = {}) {
      const headers: Record<string, string> = {};
      const key = options.key === undefined ? bootstrapKey : options.key;
      if (key !== null) headers["X-Service-API-Key"] = key;
      const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
      if (body !== undefined) headers["Content-Type"] = "application/json";
      const res = await fetch(baseUrl + path, { method, headers, body });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    async close() {
      admin.close();
      await gw.close();
      await pool.close();
    },
  };
}
