import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
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

const scrape = async () => (await fetch(`http://127.0.0.1:${h.service.metricsPort}/metrics`)).text();
const sample = (text: string, metric: string, labels: string) =>
  Number(
    text
      .split("\n")
      .find((line) => line.startsWith(`${metric}{${labels}}`))
      ?.split(" ")[1],
  );

test("/metrics reports cost and usage by project, model and kind, and caps reached", async () => {
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

  const text = await scrape();
  expect(sample(text, "billing_cost_usd_total", `project="${projectId}",kind="llm",model="svc-max"`)).toBeCloseTo(
    0.006,
    12,
  );
  expect(sample(text, "billing_cost_usd_total", `project="${projectId}",kind="proxy",model=""`)).toBeCloseTo(0.01, 12);
  expect(sample(text, "billing_usage_events_total", `project="${projectId}",kind="llm"`)).toBe(2);
  expect(
    sample(
      text,
      "billing_llm_tokens_total",
      `project="${projectId}",model="svc-max",own_key="false",direction="output"`,
    ),
  ).toBe(200);
  expect(sample(text, "billing_proxy_bytes_total", `project="${projectId}"`)).toBe(2_000_000);
  expect(sample(text, "billing_budget_exceeded_total", `scope="session"`)).toBe(1);
  expect(text).toMatch(/^billing_usage_pending 0$/m);
  expect((await fetch(`http://127.0.0.1:${h.service.metricsPort}/other`)).status).toBe(404);
});

test("every metric the Grafana dashboard queries is one billing exports", async () => {
  const dashboard = readFileSync(join(__dirname, "../../../deploy/helm/dashboards/billing.json"), "utf8");
  const queried = new Set(dashboard.match(/billing_[a-z_]+/g));
  expect(queried.size).toBeGreaterThan(5);
  const exported = new Set([...(await scrape()).matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]));
  for (const metric of queried) expect(exported).toContain(metric);
});
