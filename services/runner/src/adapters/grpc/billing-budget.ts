import { billing } from "@bas/proto";
import { connectClient, retryUnavailable } from "@bas/service-kit";
import type { BudgetVerdict } from "../../app/model-caller";

export interface BudgetCheck {
  projectId: string;
  sessionId: string;
  taskId: string;
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

export function connectBilling(address: string): BillingBudget {
  const client = connectClient(billing.BillingClient, address, 5_000);
  return {
    async check(r) {
      // Never skipped: while billing cannot answer, the step waits; past the retries the attempt fails and the task
      // is tried again later (or fails), so a cap is never passed because billing was down.
      const answer = await retryUnavailable(() =>
        client.checkBudget({
          projectId: r.projectId,
          sessionId: r.sessionId,
          taskId: r.taskId,
          ...(r.maxCostUsd ? { maxCostUsd: r.maxCostUsd } : {}),
          model: r.model,
          ownKey: r.ownKey,
          estimatedInputTokens: r.estimatedInputTokens,
          estimatedOutputTokens: r.estimatedOutputTokens,
        }),
      );
      return { allowed: answer.allowed, reason: answer.reason, capUsd: answer.capUsd };
    },
    close: () => client.close(),
  };
}
