import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import type { BillingMetrics } from "../../app/ports";
import type { LedgerType } from "../../domain/events";
import type { Charge } from "../../domain/pricing";

export interface PrometheusBillingMetrics extends BillingMetrics {
  registry: Registry;
  /** Reports how many usage facts wait in the stream, read when Prometheus scrapes. */
  setPendingSource(source: () => Promise<number>): void;
}

/**
 * Billing's Prometheus metrics, in a registry of their own (tests run several services in one process).
 * Dollar amounts here are floats: they are for dashboards; the ledger is the record.
 */
export function createPrometheusMetrics(): PrometheusBillingMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const cost = new Counter({
    name: "billing_cost_usd_total",
    help: "USD charged, by project, kind (llm, proxy, browser) and model (llm only).",
    labelNames: ["project", "kind", "model"] as const,
    registers: [registry],
  });
  const usage = new Counter({
    name: "billing_usage_events_total",
    help: "Usage facts priced and charged, by kind.",
    labelNames: ["project", "kind"] as const,
    registers: [registry],
  });
  const tokens = new Counter({
    name: "billing_llm_tokens_total",
    help: "LLM tokens charged, by project, model and direction (input, output).",
    labelNames: ["project", "model", "direction", "own_key"] as const,
    registers: [registry],
  });
  const proxyBytes = new Counter({
    name: "billing_proxy_bytes_total",
    help: "Proxy bytes charged, by project.",
    labelNames: ["project"] as const,
    registers: [registry],
  });
  const browserSeconds = new Counter({
    name: "billing_browser_seconds_total",
    help: "Browser seconds charged, by project.",
    labelNames: ["project"] as const,
    registers: [registry],
  });
  const exceeded = new Counter({
    name: "billing_budget_exceeded_total",
    help: "Cost caps reached (each stops a task), by scope (session, run).",
    labelNames: ["scope"] as const,
    registers: [registry],
  });
  const skipped = new Counter({
    name: "billing_usage_skipped_total",
    help: "Usage facts not charged, by reason (duplicate, invalid, empty).",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  const unpriced = new Counter({
    name: "billing_unpriced_model_total",
    help: "LLM calls of a model missing from the price table (charged at the fallback model's price).",
    labelNames: ["model"] as const,
    registers: [registry],
  });
  let pendingSource: (() => Promise<number>) | undefined;
  new Gauge({
    name: "billing_usage_pending",
    help: "Usage facts in the stream not yet charged (the consumer's backlog).",
    registers: [registry],
    async collect() {
      if (!pendingSource) return;
      try {
        this.set(await pendingSource());
      } catch {
        // The stream is unreachable: leave the last value; the service's own health tells the story.
      }
    },
  });

  return {
    registry,
    setPendingSource: (source) => {
      pendingSource = source;
    },
    charged(projectId: string, charge: Charge) {
      const amount = charge.amount.toNumber();
      cost.inc({ project: projectId, kind: charge.kind, model: charge.model ?? "" }, amount);
      usage.inc({ project: projectId, kind: charge.kind });
      if (charge.kind === "llm") {
        const labels = { project: projectId, model: charge.model ?? "", own_key: String(charge.ownKey) };
        tokens.inc({ ...labels, direction: "input" }, charge.inputTokens);
        tokens.inc({ ...labels, direction: "output" }, charge.outputTokens);
      }
      if (charge.kind === "proxy") proxyBytes.inc({ project: projectId }, charge.proxyBytes);
      if (charge.kind === "browser") browserSeconds.inc({ project: projectId }, charge.browserMilliseconds / 1000);
    },
    budgetExceeded(scope: LedgerType) {
      exceeded.inc({ scope: scope.replace("ledger-", "") });
    },
    usageSkipped(reason) {
      skipped.inc({ reason });
    },
    unpricedModel(model) {
      unpriced.inc({ model });
    },
  };
}
