import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadBrowserPoolConfig, startBrowserPoolService } from "@bas/browser-pool";
import { ensureStreams } from "@bas/event-store";
import { createGrpcServer, type GrpcServer } from "@bas/service-kit";
import { createTestInfra, eventually } from "@bas/testing";
import { type Stack, startStack } from "./harness";

// The other services answer health with the same grpc.health.v1 server every service uses (service-kit); these
// servers stand where browser-pool, runner and billing would listen, so their health can be switched at will.
let others: GrpcServer[];
let addresses: string[];
let stack: Stack;

beforeAll(async () => {
  others = [createGrpcServer(), createGrpcServer(), createGrpcServer()];
  addresses = [];
  for (const server of others) {
    addresses.push(`127.0.0.1:${await server.listen("127.0.0.1", 0)}`);
    server.setHealth("SERVING");
  }
  stack = await startStack({
    env: { BROWSER_POOL_ADDR: addresses[0], RUNNER_ADDR: addresses[1], BILLING_ADDR: addresses[2] },
  });
});
afterAll(async () => {
  await stack.close();
  await Promise.all(others.map((s) => s.close(0)));
});

const ALL_OK = { sessions: "ok", browserPool: "ok", runner: "ok", billing: "ok", eventStore: "ok", database: "ok" };

test("200 when every service answers its health check and the event store accepts writes", async () => {
  const reply = await stack.request("GET", "/healthz", { key: null });
  expect(reply.status).toBe(200);
  expect(reply.body).toEqual({ status: "ok", checks: ALL_OK });
});

test("503 naming the service that is not serving", async () => {
  others[1].setHealth("NOT_SERVING");
  try {
    const reply = await stack.request("GET", "/healthz", { key: null });
    expect(reply.status).toBe(503);
    expect(reply.body).toEqual({
      status: "unavailable",
      detail: "Unavailable: runner: down",
      checks: { ...ALL_OK, runner: "down" },
    });
  } finally {
    others[1].setHealth("SERVING");
  }
  // Healthy again. Each check has a 2 s deadline, and on a loaded machine one round trip can miss it for a moment:
  // what matters is that the runner's recovery shows (a failure names the check that stayed down).
  const recovered = await eventually(
    async () => (await stack.request("GET", "/healthz", { key: null })).body,
    (body) => body.status === "ok",
    10_000,
  );
  expect(recovered).toEqual({ status: "ok", checks: ALL_OK });
});

test("503 when the event store does not accept writes", async () => {
  const { jsm, streams } = stack.infra;
  await jsm.streams.delete(streams.health.stream);
  try {
    const reply = await stack.request("GET", "/healthz", { key: null });
    expect(reply.status).toBe(503);
    expect(reply.body.checks).toEqual({ ...ALL_OK, eventStore: "down" });
    expect(reply.body.detail).toBe("Unavailable: eventStore: down");
  } finally {
    await ensureStreams(jsm, streams);
  }
});

test("503 when a service is unreachable or its address is not configured", async () => {
  const partial = await startStack({ env: { RUNNER_ADDR: "127.0.0.1:1" } });
  try {
    const reply = await partial.request("GET", "/healthz", { key: null });
    expect(reply.status).toBe(503);
    expect(reply.body.checks).toEqual({
      ...ALL_OK,
      browserPool: "not configured",
      runner: "down",
      billing: "not configured",
    });
    expect(reply.body.detail).toBe("Unavailable: browserPool: not configured; runner: down; billing: not configured");
  } finally {
    await partial.close();
  }
});

test("a call to a service that is down is 503 with Retry-After, never a 500", async () => {
  const noSessions = await startStack({
    sessions: false,
    env: { SESSIONS_ADDR: "127.0.0.1:1", GRPC_DEADLINE_MS: "2000" },
  });
  try {
    const reply = await noSessions.request("GET", "/api/v3/sessions");
    expect(reply.status).toBe(503);
    expect(reply.body).toEqual({ detail: "Service temporarily unavailable; retry shortly" });
    expect(reply.headers.get("retry-after")).toBe("1");
  } finally {
    await noSessions.close();
  }
  const unconfigured = await startStack({ sessions: false });
  try {
    expect((await unconfigured.request("POST", "/api/v3/sessions", { body: { task: "x" } })).status).toBe(503);
  } finally {
    await unconfigured.close();
  }
});

test("503 naming the browser pool and what to install when Chromium is missing; 200 once the pool can launch", async () => {
  // A real browser-pool that cannot launch: it answers gRPC (SERVING), and used to count as healthy.
  const infra = await createTestInfra();
  const dataDir = mkdtempSync(join(tmpdir(), "bas-health-bp-"));
  const startPool = (chromiumPath: string) =>
    startBrowserPoolService(
      loadBrowserPoolConfig({
        NATS_URL: process.env.NATS_URL,
        DATABASE_URL: infra.databaseUrl,
        NAMESPACE: infra.namespace,
        LOG_LEVEL: "silent",
        GRPC_PORT: "0",
        METRICS_PORT: "0",
        CDP_PORT: "0",
        WARM_POOL_SIZE: "0",
        BROWSER_DATA_DIR: dataDir,
        CHROMIUM_PATH: chromiumPath,
      }),
    );
  const withPool = async (pool: { grpcPort: number }) => {
    const gateway = await startStack({
      env: { BROWSER_POOL_ADDR: `127.0.0.1:${pool.grpcPort}`, RUNNER_ADDR: addresses[1], BILLING_ADDR: addresses[2] },
    });
    try {
      return await gateway.request("GET", "/healthz", { key: null });
    } finally {
      await gateway.close();
    }
  };
  try {
    const missing = await startPool(join(dataDir, "no-chromium-here"));
    try {
      const reply = await withPool(missing);
      expect(reply.status).toBe(503);
      expect(reply.body.checks).toEqual({ ...ALL_OK, browserPool: "down" });
      expect(reply.body.detail).toBe(
        `Unavailable: browserPool: down (Chromium not found at ${join(dataDir, "no-chromium-here")}: ` +
          "install it (apt-get install -y chromium) or set CHROMIUM_PATH)",
      );
    } finally {
      await missing.close();
    }

    const installed = await startPool(process.env.CHROMIUM_PATH ?? "/usr/bin/chromium");
    try {
      expect((await withPool(installed)).body).toEqual({ status: "ok", checks: ALL_OK });
    } finally {
      await installed.close();
    }
  } finally {
    await infra.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
