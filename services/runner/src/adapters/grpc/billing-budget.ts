import { billing } from "@bas/proto";
import { connectClient, retry } from "@bas/service-kit";
import type { BudgetVerdict } from "../../app/model-caller";
import type { OutagePolicy } from "../../app/ports";

export interface BudgetCheck {
  projectId: string;
  sessionId: string;
  taskId: string;
  /** A v4 run: its cap is checked against the run's ledger. */
  runId?: string;
  maxCostUsd?: string;
  model: string;
  ownKey: boolean;
  estimatedInputTokens: number;
  estimatedOutputTokens: number;
}

export interface BillingBudget {
  check(request: BudgetCheck): Promise<BudgetVerdict>;
  close(): void;
}

export function connectBilling(address: string, outage: OutagePolicy): BillingBudget {
  const client = connectClient(billing.BillingClient, address, 5_000);
  return {
    async check(r) {
      // Never skipped: while billing cannot answer, the step waits (up to the outage grace; past it the attempt
      // fails and the task is tried again later), so a cap is never passed because billing was down.
      const answer = await retry(
        () =>
          client.checkBudget({
            projectId: r.projectId,
            sessionId: r.sessionId,
            taskId: r.taskId,
            ...(r.runId ? { runId: r.runId } : {}),
            ...(r.maxCostUsd ? { maxCostUsd: r.maxCostUsd } : {}),
            model: r.model,
            ownKey: r.ownKey,
            estimatedInputTokens: r.estimatedInputTokens,
            estimatedOutputTokens: r.estimatedOutputTokens,
          }),
        { graceMs: outage.graceMs, onRetry: (err, { waitedMs }) => outage.onWait?.("billing", err, waitedMs) },
      );
      return { allowed: answer.allowed, reason: answer.reason, capUsd: answer.capUsd };
    },
    close: () => client.close(),
  };
}
