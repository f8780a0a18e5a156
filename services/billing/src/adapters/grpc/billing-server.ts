import { type HandlerLog, unaryService } from "@bas/service-kit";
import { InvalidArgumentError } from "@bas/errors";
import type { billing } from "@bas/proto";
import type { BudgetQueries, CreditAnswer, ScopeRef } from "../../app/budget-queries";
import { formatDecimal } from "../../domain/money";
import { toWireTotals } from "../../domain/totals";

const MAX_BATCH = 500;

function scopeRef(req: billing.GetTotalsRequest): ScopeRef {
  return {
    projectId: req.projectId,
    ...(req.sessionId ? { sessionId: req.sessionId } : {}),
    ...(req.runId ? { runId: req.runId } : {}),
    ...(req.browserId ? { browserId: req.browserId } : {}),
  };
}

function toCredit(answer: CreditAnswer): billing.Credit {
  return {
    spentUsd: formatDecimal(answer.spent),
    ...(answer.limit ? { limitUsd: formatDecimal(answer.limit) } : {}),
    ...(answer.balance ? { balanceUsd: formatDecimal(answer.balance) } : {}),
  };
}

/** The Billing gRPC service: maps proto messages to the app's questions and back; errors map in `unary`. */
export function billingServer(queries: BudgetQueries, log?: HandlerLog) {
  return unaryService(
    {
      async checkBudget(req: billing.CheckBudgetRequest): Promise<billing.CheckBudgetResponse> {
        const answer = await queries.checkBudget({
          ...scopeRef({ projectId: req.projectId, sessionId: req.sessionId, runId: req.runId }),
          ...(req.maxCostUsd !== undefined ? { maxCostUsd: req.maxCostUsd } : {}),
          ...(req.taskId ? { taskId: req.taskId } : {}),
          model: req.model,
          ownKey: req.ownKey,
          estimatedInputTokens: req.estimatedInputTokens,
          estimatedOutputTokens: req.estimatedOutputTokens,
        });
        return {
          allowed: answer.allowed,
          totals: toWireTotals(answer.totals),
          capUsd: formatDecimal(answer.cap),
          reason: answer.reason ?? "",
          estimatedCostUsd: formatDecimal(answer.estimate),
        };
      },
      async getTotals(req: billing.GetTotalsRequest): Promise<billing.Totals> {
        return toWireTotals(await queries.getTotals(scopeRef(req)));
      },
      async batchGetTotals(req: billing.BatchGetTotalsRequest): Promise<billing.BatchGetTotalsResponse> {
        if (req.scopes.length > MAX_BATCH) {
          throw new InvalidArgumentError(`at most ${MAX_BATCH} scopes per call`, { field: ["body", "scopes"] });
        }
        const totals = await Promise.all(req.scopes.map((scope) => queries.getTotals(scopeRef(scope))));
        return { totals: totals.map(toWireTotals) };
      },
      async getCredit(req: billing.GetCreditRequest): Promise<billing.Credit> {
        return toCredit(await queries.credit(req.projectId));
      },
      async requireCredit(req: billing.RequireCreditRequest): Promise<billing.Credit> {
        return toCredit(
          await queries.requireCredit({
            projectId: req.projectId,
            ...(req.sessionId ? { sessionId: req.sessionId } : {}),
          }),
        );
      },
      async setCredit(req: billing.SetCreditRequest): Promise<billing.Credit> {
        return toCredit(await queries.setCredit(req.projectId, req.limitUsd));
      },
    },
    log,
  );
}
