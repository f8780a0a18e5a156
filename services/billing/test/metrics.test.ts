import { randomUUID } from "node:crypto";
import { scrapeMetrics, sumOf } from "@bas/testing";
import { type BillingHarness, drained, publishUsage, startBilling } from "./support";

const PRICE_TABLE = JSON.stringify({
  models: { "svc-max": { inputPerMillionUsd: "2", outputPerMillionUsd: "10" } },
  proxyPerGbUsd: "5",
});

let h: BillingHarness;
beforeAll(async () => {
  h = await startBilling({ PRICE_TABLE });
});
afterAll(() => h.close());

test("/metrics reports cost and usage by project, model and kind, caps reached, its gRPC calls and its consumers' lag", async () => {
  const projectId = randomUUID();
  const sessionId = randomUUID();
  const llm = { model: "svc-max", inputTokens: 1000, outputTokens: 100, ownKey: false }; // 0.003 USD
  await h.client.checkBudget({
    projectId,
    sessionId,
    maxCostUsd: "0.005",
    model: "svc-max",
    ownKey: false,
    estimatedInputTokens: 0,
    estimatedOutputTokens: 0,
  });
  await publishUsage(h.infra, { projectId, sessionId, llm });
  await publishUsage(h.infra, { projectId, sessionId, llm });
  await publishUsage(h.infra, { projectId, sessionId, proxy: { bytes: 2_000_000 } }); // 2 MB × 5/1000 = 0.01 USD
  await drained(h.infra);

  const samples = await scrapeMetrics(h.service.metricsPort);
  const project = { project: projectId };
  expect(sumOf(samples, "bas_billing_cost_usd_total", { ...project, kind: "llm", model: "svc-max" })).toBeCloseTo(
    0.006,
    12,
  );
  expect(sumOf(samples, "bas_billing_cost_usd_total", { ...project, kind: "proxy", model: "" })).toBeCloseTo(0.01, 12);
  expect(sumOf(samples, "bas_billing_usage_events_total", { ...project, kind: "llm" })).toBe(2);
  const output = { ...project, model: "svc-max", own_key: "false", direction: "output" };
  expect(sumOf(samples, "bas_billing_llm_tokens_total", output)).toBe(200);
  expect(sumOf(samples, "bas_billing_proxy_bytes_total", project)).toBe(2_000_000);
  expect(sumOf(samples, "bas_billing_budget_exceeded_total", { scope: "session" })).toBe(1);
  const checkBudget = { service: "billing", method: "bas.v1.Billing/CheckBudget", code: "OK" };
  expect(sumOf(samples, "bas_grpc_server_duration_seconds_count", checkBudget)).toBe(1);
  const usageLag = { stream: h.infra.streams.usage.stream, consumer: "billing_usage" };
  expect(sumOf(samples, "bas_jetstream_consumer_lag_messages", usageLag)).toBe(0);
  expect(sumOf(samples, "process_cpu_seconds_total", { service: "billing" })).toBeGreaterThan(0);
  expect((await fetch(`http://127.0.0.1:${h.service.metricsPort}/other`)).status).toBe(404);
});
