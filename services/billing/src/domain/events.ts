import type { DomainEvent } from "@bas/event-store";
import type { UsageKind } from "./usage";
import type { WireTotals } from "./totals";

/** Billing's aggregates: one ledger per session, run, browser and project (id = that id). */
export const LEDGER_TYPES = ["ledger-session", "ledger-run", "ledger-browser", "ledger-project"] as const;
export type LedgerType = (typeof LEDGER_TYPES)[number];

/**
 * What every ledger event carries besides its own facts, so that the last event of a ledger is its whole state
 * (a ledger is read with one lookup, however long its history).
 */
interface Bookkeeping {
  projectId: string;
  totals: WireTotals;
  /** USAGE stream sequence of the last usage charged to this ledger. */
  usageSequence: number;
  capUsd?: string;
  taskId?: string;
  budgetExceeded: boolean;
}

/** A usage was priced and added to this ledger. Data is JSON of `bas.v1.ChargeRecorded`. */
export type ChargeRecorded = DomainEvent<
  "ChargeRecorded",
  Bookkeeping & {
    usageId: string;
    kind: UsageKind;
    amountUsd: string;
    model?: string;
    ownKey: boolean;
    inputTokens: number;
    outputTokens: number;
    proxyBytes: number;
    browserMilliseconds: number;
    /** With `lastReport`: the browser whose cost this charge completes. */
    browserId?: string;
    lastReport?: boolean;
  }
>;

/** The ledger's total reached its cap: the task must stop. Data is JSON of `bas.v1.BudgetExceeded`. */
export type BudgetExceeded = DomainEvent<
  "BudgetExceeded",
  { projectId: string; capUsd: string; totals: WireTotals; taskId?: string; usageSequence: number }
>;

/** The cap billing enforces on this ledger from now on. Data is JSON of `bas.v1.BudgetCapSet`. */
export type BudgetCapSet = DomainEvent<"BudgetCapSet", Bookkeeping & { capUsd: string }>;

export type LedgerEvent = ChargeRecorded | BudgetExceeded | BudgetCapSet;
