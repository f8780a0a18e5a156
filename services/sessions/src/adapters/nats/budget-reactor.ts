import type { Reactor } from "@bas/event-store";
import { billing, LEDGER_AGGREGATES, type LedgerEventType } from "@bas/proto";
import { ServiceError } from "@bas/errors";
import type { SessionCommands } from "../../app/session-commands";

/**
 * Billing says a session's total reached its cap: stop the running task ("cost cap reached"). A refusal (the
 * session is gone) is final and skipped; anything else is retried by the projection runner.
 */
export function budgetReactor(commands: SessionCommands, log?: { warn(o: object, msg: string): void }): Reactor {
  return {
    name: "sessions-budget",
    aggregateType: LEDGER_AGGREGATES.session,
    canHandle: ["BudgetExceeded"] satisfies LedgerEventType[],
    async react(event) {
      const { capUsd, taskId } = billing.BudgetExceeded.fromJSON(event.data);
      try {
        await commands.execute(event.aggregateId, { type: "StopForBudget", capUsd, taskId: taskId || null });
      } catch (err) {
        if (!(err instanceof ServiceError)) throw err;
        log?.warn({ err, sessionId: event.aggregateId }, "budget stop refused");
      }
    },
  };
}
