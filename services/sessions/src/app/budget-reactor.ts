import type { Projection } from "@bas/event-store";
import { billing } from "@bas/proto";
import { ServiceError } from "@bas/service-kit";
import { LEDGER_SESSION } from "./ports";
import type { SessionCommands } from "./session-commands";

/**
 * Billing says a session's total reached its cap: stop the running task ("cost cap reached"). A refusal (the
 * session is gone) is final and skipped; anything else is retried by the projection runner.
 */
export function budgetReactor(commands: SessionCommands, log?: { warn(o: object, msg: string): void }): Projection {
  return {
    name: "sessions-budget",
    aggregateType: LEDGER_SESSION,
    setup: async () => {},
    teardown: async () => {},
    async apply(_trx, event) {
      if (event.type !== "BudgetExceeded") return;
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
