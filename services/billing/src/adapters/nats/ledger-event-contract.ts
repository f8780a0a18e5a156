import type { billing } from "@bas/proto";
import type { BudgetCapSet, BudgetExceeded, ChargeRecorded } from "../../domain/ledger-events";

/**
 * Compile-time check that the ledger events' data is the JSON of the proto messages other services decode them as
 * (`billing.ChargeRecorded.fromJSON(event.data)`); a drift between the two fails the type-check here.
 */
type Assignable<T extends U, U> = T;
export type LedgerEventContract = [
  Assignable<ChargeRecorded["data"], billing.ChargeRecorded>,
  Assignable<BudgetExceeded["data"], billing.BudgetExceeded>,
  Assignable<BudgetCapSet["data"], billing.BudgetCapSet>,
];
