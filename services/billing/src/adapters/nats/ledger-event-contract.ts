import type { Assignable, billing, LedgerEventType } from "@bas/proto";
import type { BudgetCapSet, BudgetExceeded, ChargeRecorded, LedgerEvent } from "../../domain/events";

/**
 * Compile-time check that the ledger events' data is the JSON of the proto messages other services decode them as
 * (`billing.ChargeRecorded.fromJSON(event.data)`), and that the domain's event types are exactly the published ones;
 * a drift fails the type-check here.
 */
export type LedgerEventContract = [
  Assignable<LedgerEvent["type"], LedgerEventType>,
  Assignable<LedgerEventType, LedgerEvent["type"]>,
  Assignable<ChargeRecorded["data"], billing.ChargeRecorded>,
  Assignable<BudgetExceeded["data"], billing.BudgetExceeded>,
  Assignable<BudgetCapSet["data"], billing.BudgetCapSet>,
];
