import type { Logger } from "@bas/service-kit";
import { type Money, parseDecimal } from "../domain/money";
import type { Ledgers } from "./ledgers";
import type { BillingMetrics, SessionCap } from "./ports";

/**
 * Records a session's cap (or the default one) on its ledger. Idempotent: the same cap for the same task decides
 * nothing. A cap that is already reached when a task starts emits BudgetExceeded at once, so that task stops.
 */
export function createSetSessionCap(deps: {
  ledgers: Ledgers;
  defaultCap: Money;
  metrics: BillingMetrics;
  log: Pick<Logger, "warn">;
}) {
  return async (cap: SessionCap): Promise<void> => {
    const parsed = cap.maxCostUsd === null ? undefined : parseDecimal(cap.maxCostUsd);
    if (cap.maxCostUsd !== null && !parsed?.greaterThan(0)) {
      deps.log.warn({ sessionId: cap.sessionId, maxCostUsd: cap.maxCostUsd }, "session cap is not a positive decimal");
    }
    const handled = await deps.ledgers.handle("ledger-session", cap.sessionId, [
      {
        type: "SetCap",
        projectId: cap.projectId,
        cap: parsed?.greaterThan(0) ? parsed : deps.defaultCap,
        ...(cap.taskId ? { taskId: cap.taskId } : {}),
      },
    ]);
    if (handled.events.some((e) => e.type === "BudgetExceeded")) deps.metrics.budgetExceeded("ledger-session");
  };
}
