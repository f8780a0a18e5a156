import type { BudgetExceeded, LedgerEvent } from "./events";
import { formatDecimal, type Money, parseDecimal } from "./money";
import type { Charge } from "./pricing";
import { addCharge, EMPTY_TOTALS, fromWireTotals, type Totals, toWireTotals } from "./totals";

export interface LedgerState {
  /** Undefined until the ledger's first event. */
  projectId?: string;
  totals: Totals;
  /** USAGE stream sequence of the last usage charged; usages at or below it are already in the totals. */
  usageSequence: number;
  cap?: Money;
  taskId?: string;
  /** BudgetExceeded was emitted for the current cap (and task). */
  budgetExceeded: boolean;
}

export type LedgerCommand =
  | {
      type: "RecordCharge";
      usageId: string;
      usageSequence: number;
      projectId: string;
      charge: Charge;
      /** The usage was this browser's last report: the charge says the browser's cost is complete. */
      completesBrowser?: string;
      /** For the scope a cap applies to: the cap to enforce when none was set for this ledger yet. */
      defaultCap?: Money;
    }
  | { type: "SetCap"; projectId: string; cap: Money; taskId?: string };

export const initialLedgerState = (): LedgerState => ({
  totals: EMPTY_TOTALS,
  usageSequence: 0,
  budgetExceeded: false,
});

/** A ledger's state is its last event: every event carries the whole bookkeeping. */
export function evolveLedger(_state: LedgerState, event: LedgerEvent): LedgerState {
  const data = event.data;
  return {
    projectId: data.projectId,
    totals: fromWireTotals(data.totals),
    usageSequence: Number(data.usageSequence ?? 0),
    cap: data.capUsd === undefined ? undefined : parseDecimal(data.capUsd),
    taskId: data.taskId,
    budgetExceeded: event.type === "BudgetExceeded" ? true : Boolean(event.data.budgetExceeded),
  };
}

function bookkeeping(state: LedgerState, projectId: string) {
  return {
    projectId: state.projectId ?? projectId,
    totals: toWireTotals(state.totals),
    usageSequence: state.usageSequence,
    ...(state.cap ? { capUsd: formatDecimal(state.cap) } : {}),
    ...(state.taskId ? { taskId: state.taskId } : {}),
    budgetExceeded: state.budgetExceeded,
  };
}

/** The total reached the cap and nobody was told yet (also repairs a crash between a charge and this event). */
function budgetCheck(state: LedgerState, projectId: string): BudgetExceeded[] {
  if (!state.cap || state.budgetExceeded || state.totals.totalCostUsd.lessThan(state.cap)) return [];
  return [
    {
      type: "BudgetExceeded",
      data: {
        projectId: state.projectId ?? projectId,
        capUsd: formatDecimal(state.cap),
        totals: toWireTotals(state.totals),
        ...(state.taskId ? { taskId: state.taskId } : {}),
        usageSequence: state.usageSequence,
      },
    },
  ];
}

export function decideLedger(command: LedgerCommand, state: LedgerState): LedgerEvent[] {
  switch (command.type) {
    case "RecordCharge": {
      // Charges arrive in USAGE stream order, so anything at or below the watermark is a redelivery.
      if (command.usageSequence <= state.usageSequence) return budgetCheck(state, command.projectId);
      const { charge } = command;
      const after: LedgerState = {
        ...state,
        projectId: state.projectId ?? command.projectId,
        totals: addCharge(state.totals, charge),
        usageSequence: command.usageSequence,
        cap: state.cap ?? command.defaultCap,
      };
      return [
        {
          type: "ChargeRecorded",
          data: {
            ...bookkeeping(after, command.projectId),
            usageId: command.usageId,
            kind: charge.kind,
            amountUsd: formatDecimal(charge.amount),
            ...(charge.model ? { model: charge.model } : {}),
            ownKey: charge.ownKey,
            inputTokens: charge.inputTokens,
            outputTokens: charge.outputTokens,
            proxyBytes: charge.proxyBytes,
            browserMilliseconds: charge.browserMilliseconds,
            ...(command.completesBrowser ? { browserId: command.completesBrowser, lastReport: true } : {}),
          },
        },
        ...budgetCheck(after, command.projectId),
      ];
    }
    case "SetCap": {
      // A cap without a task id keeps the current task: it is the same episode seen through CheckBudget.
      const taskId = command.taskId ?? state.taskId;
      const sameTask = taskId === state.taskId;
      if (sameTask && state.cap?.equals(command.cap)) return budgetCheck(state, command.projectId);
      const after: LedgerState = {
        ...state,
        projectId: state.projectId ?? command.projectId,
        cap: command.cap,
        taskId,
        // A new task, or a cap raised above the total, is a new episode: reaching the cap is news again.
        budgetExceeded: sameTask && state.budgetExceeded && !state.totals.totalCostUsd.lessThan(command.cap),
      };
      return [
        {
          type: "BudgetCapSet",
          data: { ...bookkeeping(after, command.projectId), capUsd: formatDecimal(command.cap) },
        },
        ...budgetCheck(after, command.projectId),
      ];
    }
    default: {
      const never: never = command;
      throw new Error(`unknown command ${JSON.stringify(never)}`);
    }
  }
}
