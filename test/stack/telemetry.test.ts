import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { resolve } from "node:path";
import { freePort, waitForExit, waitForLine } from "@bas/embedded-infra";
import { billing } from "@bas/proto";
import { connectClient } from "@bas/service-kit";
import { createTestInfra, type TestInfra } from "@bas/testing";

const ROOT = resolve(__dirname, "../..");

let infra: TestInfra;
let collector: Server;
let collectorUrl: string;
const received: { path: string; body: string }[] = [];

beforeAll(async () => {
  infra = await createTestInfra();
  // A stand-in OTLP/HTTP collector: it only records what it is sent.
  collector = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      received.push({ path: req.url ?? "", body });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
  collectorUrl = `http://127.0.0.1:${(collector.address() as { port: number }).port}`;
});
afterAll(async () => {
  collector.close();
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
      OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
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
    while (!received.some((r) => r.body.includes("GetTotals")) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    child.kill("SIGTERM");
    await waitForExit(child, 20_000);
  }
  const traces = received.filter((r) => r.path === "/v1/traces");
  expect(traces.length).toBeGreaterThan(0);
  const all = traces.map((t) => t.body).join("\n");
  expect(all).toContain("bas.v1.Billing/GetTotals");
  expect(all).toContain("billing");
});
