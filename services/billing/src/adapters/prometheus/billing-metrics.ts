import { createServiceMetrics, type ServiceMetrics } from "@bas/service-kit";
import { Counter } from "prom-client";
import type { BillingMetrics } from "../../app/ports";
import type { LedgerType } from "../../domain/events";
import type { Charge } from "../../domain/pricing";

/**
 * Billing's Prometheus metrics on top of what every service exports. Dollar amounts here are floats: they are for
 * dashboards; the ledger is the record. Project ids are labels: one series per project and model, as many as the
 * deployment has projects.
 */
export function createBillingMetrics(): ServiceMetrics & BillingMetrics {
  const base = createServiceMetrics("billing");
  const registers = [base.registry];
  const cost = new Counter({
    name: "bas_billing_cost_usd_total",
    help: "USD charged, by project, kind (llm, proxy, browser) and model (llm only).",
    labelNames: ["project", "kind", "model"] as const,
    registers,
  });
  const usage = new Counter({
    name: "bas_billing_usage_events_total",
    help: "Usage facts priced and charged, by project and kind.",
    labelNames: ["project", "kind"] as const,
    registers,
  });
  const tokens = new Counter({
    name: "bas_billing_llm_tokens_total",
    help: "LLM tokens charged, by project, model, direction (input, output) and whether the project's own key paid.",
    labelNames: ["project", "model", "direction", "own_key"] as const,
    registers,
  });
  const proxyBytes = new Counter({
    name: "bas_billing_proxy_bytes_total",
    help: "Proxy bytes charged, by project.",
    labelNames: ["project"] as const,
    registers,
  });
  const browserSeconds = new Counter({
    name: "bas_billing_browser_seconds_total",
    help: "Browser seconds charged, by project.",
    labelNames: ["project"] as const,
    registers,
  });
  const exceeded = new Counter({
    name: "bas_billing_budget_exceeded_total",
    help: "Cost caps reached (each stops a task), by scope (session, run).",
    labelNames: ["scope"] as const,
    registers,
  });
  const skipped = new Counter({
    name: "bas_billing_usage_skipped_total",
    help: "Usage facts not charged, by reason (duplicate, invalid, empty).",
    labelNames: ["reason"] as const,
    registers,
  });
  const unpriced = new Counter({
    name: "bas_billing_unpriced_model_total",
    help: "LLM calls of a model missing from the price table (charged at the fallback model's price).",
    labelNames: ["model"] as const,
    registers,
  });

  return {
    ...base,
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
