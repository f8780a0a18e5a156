import type { Reactor } from "@bas/event-store";
import { billing, LEDGER_AGGREGATES, type LedgerEventType } from "@bas/proto";
import { ServiceError } from "@bas/errors";
import type { SessionCommands } from "../../app/session-commands";

type Log = { warn(o: object, msg: string): void };

/**
 * Billing says a ledger's total reached its cap: stop the task it is about ("cost cap reached"). The session's ledger
 * names the session (its id); a v4 run's ledger names the run, whose session `sessionOfRun` finds. A refusal (the
 * session is gone) is final and skipped; anything else is retried by the projection runner.
 */
function budgetReactor(
  name: string,
  ledger: string,
  target: (
    ledgerId: string,
    taskId: string | null,
  ) => Promise<{ sessionId: string; taskId: string | null } | undefined>,
  commands: SessionCommands,
  log?: Log,
): Reactor {
  return {
    name,
    aggregateType: ledger,
    canHandle: ["BudgetExceeded"] satisfies LedgerEventType[],
    async react(event) {
      const { capUsd, taskId } = billing.BudgetExceeded.fromJSON(event.data);
      const found = await target(event.aggregateId, taskId || null);
      if (!found) return;
      try {
        await commands.execute(found.sessionId, { type: "StopForBudget", capUsd, taskId: found.taskId });
      } catch (err) {
        if (!(err instanceof ServiceError)) throw err;
        log?.warn({ err, sessionId: found.sessionId }, "budget stop refused");
      }
    },
  };
}

export const sessionBudgetReactor = (commands: SessionCommands, log?: Log) =>
  budgetReactor(
    "sessions-budget",
    LEDGER_AGGREGATES.session,
    async (sessionId, taskId) => ({ sessionId, taskId }),
    commands,
    log,
  );

/** A run's ledger: the run is the task to stop. A run the read model does not know yet is retried. */
export const runBudgetReactor = (
  commands: SessionCommands,
  sessionOfRun: (runId: string) => Promise<string | undefined>,
  log?: Log,
) =>
  budgetReactor(
    "sessions-run-budget",
    LEDGER_AGGREGATES.run,
    async (runId) => {
      const sessionId = await sessionOfRun(runId);
      if (!sessionId) throw new Error(`run ${runId} is not in the read model yet`);
      return { sessionId, taskId: runId };
    },
    commands,
    log,
  );
