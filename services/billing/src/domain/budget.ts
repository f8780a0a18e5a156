import type { Money } from "./money";

export type BudgetRefusal = "cost_cap" | "insufficient_credit";

export interface BudgetQuestion {
  /** The cap scope's running total and cap. */
  spent: Money;
  cap: Money;
  /** The project's credit limit and what the project was charged; no limit = unlimited credit. */
  creditLimit?: Money;
  projectSpent: Money;
  /** The priced estimate of the next step. */
  estimate: Money;
}

/**
 * The next step may run iff it fits under the cap (spent + estimate ≤ cap, and the cap is not already reached) and
 * under the project's credit. Refusing only what would not fit keeps the overshoot to at most one step's cost.
 */
export function decideBudget(q: BudgetQuestion): { allowed: true } | { allowed: false; reason: BudgetRefusal } {
  if (!q.spent.lessThan(q.cap) || q.spent.plus(q.estimate).greaterThan(q.cap)) {
    return { allowed: false, reason: "cost_cap" };
  }
  if (q.creditLimit && !hasCredit(q.creditLimit, q.projectSpent, q.estimate)) {
    return { allowed: false, reason: "insufficient_credit" };
  }
  return { allowed: true };
}

/** Credit left: the limit minus what was charged (negative when a last step overshot). */
export function creditBalance(limit: Money, spent: Money): Money {
  return limit.minus(spent);
}

/** Some credit is left, and at least `next` of it. */
export function hasCredit(limit: Money, spent: Money, next: Money): boolean {
  const balance = creditBalance(limit, spent);
  return balance.greaterThan(0) && !balance.lessThan(next);
}
