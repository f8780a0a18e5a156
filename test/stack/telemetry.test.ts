import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { freePort, waitForExit, waitForLine } from "@bas/embedded-infra";
import { billing } from "@bas/proto";
import { connectClient } from "@bas/service-kit";
import { createTestInfra, type TestInfra } from "@bas/testing";
import { type OtlpCollector, startOtlpCollector } from "../support/otlp-collector";

const ROOT = resolve(__dirname, "../..");

let infra: TestInfra;
let collector: OtlpCollector;

beforeAll(async () => {
  infra = await createTestInfra();
  collector = await startOtlpCollector();
});
afterAll(async () => {
  await collector.close();
  await infra.close();
});

test("with OTEL_EXPORTER_OTLP_ENDPOINT set, a service exports the spans of the gRPC calls it served", async () => {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", "services/billing/src/main.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      NATS_URL: process.env.NATS_URL,
      DATABASE_URL: infra.databaseUrl,
      NAMESPACE: infra.namespace,
      GRPC_PORT: String(port),
      METRICS_PORT: "0",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_SDK_DISABLED: "false",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  try {
    await waitForLine(child, /listening|started|ready/i, 30_000, "billing");
    const client = connectClient(billing.BillingClient, `127.0.0.1:${port}`);
    await client.getTotals({ projectId: "00000000-0000-4000-8000-000000000001" });
    client.close();
    const deadline = Date.now() + 15_000;
    while (!collector.received.some((r) => r.body.includes("GetTotals")) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    child.kill("SIGTERM");
    await waitForExit(child, 20_000);
  }
  const traces = collector.received.filter((r) => r.path === "/v1/traces");
  expect(traces.length).toBeGreaterThan(0);
  const all = traces.map((t) => t.body).join("\n");
  expect(all).toContain("bas.v1.Billing/GetTotals");
  expect(all).toContain("billing");
});
