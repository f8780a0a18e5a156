import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createBillingMetrics } from "@bas/billing/src/adapters/prometheus/billing-metrics";
import { createBrowserPoolMetrics } from "@bas/browser-pool/src/adapters/prometheus/browser-pool-metrics";
import { createGatewayMetrics } from "@bas/gateway/src/adapters/prometheus/gateway-metrics";
import { createRunnerMetrics } from "@bas/runner/src/adapters/prometheus/runner-metrics";
import { createMailboxMetrics } from "@bas/sessions/src/adapters/prometheus/mailbox-metrics";
import { createServiceMetrics } from "@bas/service-kit";
import { promqlMetricNames } from "./promql-metric-names";

const ROOT = resolve(__dirname, "../..");
const DASHBOARDS = join(ROOT, "deploy/helm/bas/dashboards");

interface Dashboard {
  title: string;
  panels: { title: string; targets?: { expr: string }[] }[];
  templating: { list: { type: string; query?: string | { query: string } }[] };
}

/** Every PromQL query of a dashboard: its panels' targets and its query variables. */
function queriesOf(dashboard: Dashboard): string[] {
  const panels = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  const variables = dashboard.templating.list
    .filter((v) => v.type === "query")
    .map((v) => (typeof v.query === "string" ? v.query : (v.query?.query ?? "")));
  return [...panels, ...variables];
}

const dashboards = readdirSync(DASHBOARDS)
  .filter((file) => file.endsWith(".json"))
  .map((file) => ({ file, dashboard: JSON.parse(readFileSync(join(DASHBOARDS, file), "utf8")) as Dashboard }));

/**
 * The series names the services export, from the registries the services build (sessions: what every service
 * exports, and its mailboxes'); a histogram `x` is read as `x_bucket`, `x_sum` and `x_count`.
 */
function exportedSeries(): Set<string> {
  const sessions = createServiceMetrics("sessions");
  createMailboxMetrics(sessions.registry);
  const registries = [
    createGatewayMetrics(),
    sessions,
    createBrowserPoolMetrics(),
    createRunnerMetrics(),
    createBillingMetrics(),
  ].map((m) => m.registry);
  const series = new Set<string>();
  for (const metric of registries.flatMap((r) => r.getMetricsAsArray())) {
    const histogram = String(metric.type) === "histogram";
    for (const name of histogram ? ["_bucket", "_sum", "_count"].map((s) => metric.name + s) : [metric.name]) {
      series.add(name);
    }
  }
  return series;
}

test("the PromQL reader finds the metrics of an expression and nothing else", () => {
  const expr =
    'histogram_quantile(0.95, sum by (le, route) (rate(a_seconds_bucket{route!="x{y}",svc=~"$s"}[$__rate_interval]))) ' +
    "/ on(job) group_left(service) b_total offset 5m * 1e9 + topk(10, max without (state) (c))";
  expect(promqlMetricNames(expr).sort()).toEqual(["a_seconds_bucket", "b_total", "c"]);
  expect(promqlMetricNames("label_values(d_total, project)")).toEqual(["d_total"]);
});

test("the four dashboards are there: services, agents and runs, browsers and pool, cost", () => {
  expect(dashboards.map((d) => d.dashboard.title).sort()).toEqual([
    "Agents and runs",
    "Browsers and pool",
    "Cost",
    "Services",
  ]);
});

test.each(dashboards.map((d) => [d.file, d.dashboard] as const))(
  "every metric %s queries is one a service exports",
  (_file, dashboard) => {
    const exported = exportedSeries();
    const queried = new Set(queriesOf(dashboard).flatMap(promqlMetricNames));
    expect(queried.size).toBeGreaterThan(3);
    expect([...queried].filter((name) => !exported.has(name))).toEqual([]);
  },
);

test("every bas_ metric a service exports is on some dashboard and in docs/observability.md", () => {
  const queried = new Set(dashboards.flatMap((d) => queriesOf(d.dashboard).flatMap(promqlMetricNames)));
  const docs = readFileSync(join(ROOT, "docs/observability.md"), "utf8");
  const ours = [...exportedSeries()].filter((name) => name.startsWith("bas_"));
  const family = (name: string) => name.replace(/_(bucket|sum|count)$/, "");
  const families = new Set(ours.map(family));
  const onDashboards = new Set([...queried].map(family));
  expect(families.size).toBeGreaterThan(15);
  expect([...families].filter((name) => !onDashboards.has(name))).toEqual([]);
  expect([...families].filter((name) => !docs.includes(`\`${name}\``))).toEqual([]);
});
