import type { LedgerEvent } from "./events";
import { decideLedger, evolveLedger, initialLedgerState, type LedgerCommand, type LedgerState } from "./decider";
import { type Money, parseDecimal } from "./money";
import type { Charge } from "./pricing";

const usd = (text: string): Money => parseDecimal(text)!;
const llm = (amount: string): Charge => ({
  kind: "llm",
  amount: usd(amount),
  model: "svc-max",
  ownKey: false,
  inputTokens: 10,
  outputTokens: 1,
  proxyBytes: 0,
  browserMilliseconds: 0,
});
const charge = (sequence: number, amount: string, defaultCap?: string): LedgerCommand => ({
  type: "RecordCharge",
  usageId: `u${sequence}`,
  usageSequence: sequence,
  projectId: "p",
  charge: llm(amount),
  ...(defaultCap ? { defaultCap: usd(defaultCap) } : {}),
});
const setCap = (cap: string, taskId?: string): LedgerCommand => ({
  type: "SetCap",
  projectId: "p",
  cap: usd(cap),
  ...(taskId ? { taskId } : {}),
});

/** Given the commands so far (their events folded in), the state. */
function given(...commands: LedgerCommand[]): LedgerState {
  let state = initialLedgerState();
  for (const command of commands) {
    for (const event of decideLedger(command, state)) {
      state = evolveLedger(state, event);
    }
  }
  return state;
}
const types = (events: LedgerEvent[]) => events.map((e) => e.type);

test("a charge adds to the running totals and moves the watermark", () => {
  const events = decideLedger(charge(3, "0.25"), given(charge(1, "0.5")));
  expect(types(events)).toEqual(["ChargeRecorded"]);
  expect(events[0].data).toMatchObject({
    usageId: "u3",
    amountUsd: "0.25",
    usageSequence: 3,
    totals: { totalCostUsd: "0.75", llmCostUsd: "0.75", inputTokens: 20, outputTokens: 2 },
  });
});

test("a usage at or below the watermark is a redelivery: nothing is charged", () => {
  const state = given(charge(1, "0.5"), charge(4, "0.5"));
  expect(decideLedger(charge(4, "0.5"), state)).toEqual([]);
  expect(decideLedger(charge(2, "0.5"), state)).toEqual([]);
});

test("the charge that reaches the cap emits BudgetExceeded once; later charges do not", () => {
  const state = given(setCap("1", "t1"), charge(1, "0.6"));
  const reaching = decideLedger(charge(2, "0.4"), state);
  expect(types(reaching)).toEqual(["ChargeRecorded", "BudgetExceeded"]);
  expect(reaching[1].data).toMatchObject({ capUsd: "1", taskId: "t1", totals: { totalCostUsd: "1" } });
  expect(types(decideLedger(charge(3, "0.1"), given(setCap("1", "t1"), charge(1, "0.6"), charge(2, "0.4"))))).toEqual([
    "ChargeRecorded",
  ]);
});

test("a crash between the charge and BudgetExceeded is repaired when the usage comes again", () => {
  let state = given(setCap("1"));
  const [recorded] = decideLedger(charge(1, "1.5"), state);
  state = evolveLedger(state, recorded);
  expect(types(decideLedger(charge(1, "1.5"), state))).toEqual(["BudgetExceeded"]);
});

test("the default cap applies to a ledger without one and is recorded with the charge", () => {
  const events = decideLedger(charge(1, "2", "2"), initialLedgerState());
  expect(types(events)).toEqual(["ChargeRecorded", "BudgetExceeded"]);
  expect(events[0].data).toMatchObject({ capUsd: "2" });
  // A cap set explicitly wins over the default.
  expect(types(decideLedger(charge(1, "2", "2"), given(setCap("5"))))).toEqual(["ChargeRecorded"]);
});

test("setting the same cap again decides nothing; a new task on a ledger past its cap is stopped at once", () => {
  const past = given(setCap("1", "t1"), charge(1, "1.2"));
  expect(decideLedger(setCap("1", "t1"), past)).toEqual([]);
  expect(decideLedger(setCap("1"), past)).toEqual([]);
  const next = decideLedger(setCap("1", "t2"), past);
  expect(types(next)).toEqual(["BudgetCapSet", "BudgetExceeded"]);
  expect(next[1].data).toMatchObject({ taskId: "t2" });
});

test("a cap raised above the total in the same task makes reaching it news again", () => {
  const raised = given(setCap("1", "t1"), charge(1, "1.2"), setCap("2", "t1"));
  expect(raised.budgetExceeded).toBe(false);
  expect(types(decideLedger(charge(2, "0.8"), raised))).toEqual(["ChargeRecorded", "BudgetExceeded"]);
});
