import { InsufficientCreditError, InvalidArgumentError, NotFoundError } from "@bas/errors";
import { creditBalance, decideBudget, type BudgetRefusal } from "../domain/budget";
import type { LedgerType } from "../domain/events";
import { type Money, parseDecimal, ZERO } from "../domain/money";
import { type Pricing, priceLlm } from "../domain/pricing";
import type { Totals } from "../domain/totals";
import type { Ledgers, LedgerSnapshot } from "./ledgers";
import type { BillingMetrics, CreditLimits } from "./ports";

export interface ScopeRef {
  projectId: string;
  sessionId?: string;
  runId?: string;
  browserId?: string;
}

export interface BudgetCheck extends ScopeRef {
  maxCostUsd?: string;
  taskId?: string;
  model: string;
  ownKey: boolean;
  estimatedInputTokens: number;
  estimatedOutputTokens: number;
}

export interface BudgetAnswer {
  allowed: boolean;
  reason?: BudgetRefusal;
  totals: Totals;
  cap: Money;
  estimate: Money;
}

export interface CreditAnswer {
  limit?: Money;
  spent: Money;
  balance?: Money;
}

export interface BudgetQueriesDeps {
  ledgers: Ledgers;
  credits: CreditLimits;
  pricing: Pricing;
  defaultCap: Money;
  metrics: Pick<BillingMetrics, "budgetExceeded">;
}

/** A cost cap or credit limit given by a caller: a decimal string of the spec's pattern, > 0 (or ≥ 0). */
export function parseAmount(value: string, field: string, options: { allowZero?: boolean } = {}): Money {
  const parsed = parseDecimal(value);
  const ok = parsed && (options.allowZero ? !parsed.isNegative() : parsed.greaterThan(0));
  if (!ok) {
    const what = options.allowZero ? "a non-negative decimal" : "a positive decimal";
    throw new InvalidArgumentError(`${field} must be ${what}, e.g. "1.50"`, { field: ["body", field] });
  }
  return parsed!;
}

function requireProject(projectId: string) {
  if (!projectId) throw new InvalidArgumentError("projectId is required", { field: ["body", "projectId"] });
}

/** The ledger a read is about: the narrowest scope named. */
export function scopeOf(ref: ScopeRef): { type: LedgerType; id: string } {
  if (ref.runId) return { type: "ledger-run", id: ref.runId };
  if (ref.sessionId) return { type: "ledger-session", id: ref.sessionId };
  if (ref.browserId) return { type: "ledger-browser", id: ref.browserId };
  return { type: "ledger-project", id: ref.projectId };
}

/** Budget, totals and credit answers. Each reads a ledger's last event only: cheap enough before every step. */
export function createBudgetQueries(deps: BudgetQueriesDeps) {
  const { ledgers, credits, pricing } = deps;

  async function readOwn(projectId: string, type: LedgerType, id: string): Promise<LedgerSnapshot> {
    const snapshot = await ledgers.read(type, id);
    // Another project's ledger is not found, never shown (nor is its existence revealed).
    if (snapshot.state.projectId !== undefined && snapshot.state.projectId !== projectId) {
      throw new NotFoundError(`${type.replace("ledger-", "")} not found`);
    }
    return snapshot;
  }

  async function credit(projectId: string): Promise<CreditAnswer> {
    requireProject(projectId);
    const [limitText, project] = await Promise.all([credits.get(projectId), ledgers.read("ledger-project", projectId)]);
    const spent = project.state.totals.totalCostUsd;
    const limit = limitText === undefined ? undefined : parseDecimal(limitText);
    return limit ? { limit, spent, balance: creditBalance(limit, spent) } : { spent };
  }

  /** The credit limit and what was spent against it; the project's ledger is read only when there is a limit. */
  async function creditForCheck(projectId: string): Promise<{ limit?: Money; spent: Money }> {
    const limitText = await credits.get(projectId);
    if (limitText === undefined) return { spent: ZERO };
    const project = await ledgers.read("ledger-project", projectId);
    return { limit: parseDecimal(limitText), spent: project.state.totals.totalCostUsd };
  }

  /**
   * Records the cap the caller states when the ledger does not have it yet, so the charge that reaches it emits
   * BudgetExceeded. A check without a cap keeps the ledger's cap (set from the session's events) or the default.
   */
  async function capped(check: BudgetCheck, type: LedgerType, id: string): Promise<LedgerSnapshot> {
    const current = await readOwn(check.projectId, type, id);
    const stated = check.maxCostUsd === undefined ? undefined : parseAmount(check.maxCostUsd, "maxCostUsd");
    const cap = stated ?? current.state.cap ?? deps.defaultCap;
    const newTask = check.taskId !== undefined && check.taskId !== current.state.taskId;
    if (current.state.cap?.equals(cap) && !newTask) return current;
    const handled = await ledgers.handle(type, id, [
      { type: "SetCap", projectId: check.projectId, cap, ...(check.taskId ? { taskId: check.taskId } : {}) },
    ]);
    if (handled.events.some((e) => e.type === "BudgetExceeded")) deps.metrics.budgetExceeded(type);
    return handled;
  }

  async function checkBudget(check: BudgetCheck): Promise<BudgetAnswer> {
    requireProject(check.projectId);
    if (!check.sessionId && !check.runId) {
      throw new InvalidArgumentError("sessionId or runId is required", { field: ["body", "sessionId"] });
    }
    if (check.estimatedInputTokens < 0 || check.estimatedOutputTokens < 0) {
      throw new InvalidArgumentError("estimated tokens must not be negative", { field: ["body", "estimatedTokens"] });
    }
    const scope = scopeOf(check);
    const [ledger, projectCredit] = await Promise.all([
      capped(check, scope.type, scope.id),
      creditForCheck(check.projectId),
    ]);
    const estimate = priceLlm(pricing, {
      model: check.model,
      inputTokens: check.estimatedInputTokens,
      outputTokens: check.estimatedOutputTokens,
      ownKey: check.ownKey,
    });
    const cap = ledger.state.cap ?? deps.defaultCap;
    const verdict = decideBudget({
      spent: ledger.state.totals.totalCostUsd,
      cap,
      creditLimit: projectCredit.limit,
      projectSpent: projectCredit.spent,
      estimate,
    });
    return {
      allowed: verdict.allowed,
      ...(verdict.allowed ? {} : { reason: verdict.reason }),
      totals: ledger.state.totals,
      cap,
      estimate,
    };
  }

  async function getTotals(ref: ScopeRef): Promise<Totals> {
    requireProject(ref.projectId);
    const scope = scopeOf(ref);
    return (await readOwn(ref.projectId, scope.type, scope.id)).state.totals;
  }

  /** Fails with InsufficientCreditError (402 at the gateway) when new work must not start. */
  async function requireCredit(ref: { projectId: string; sessionId?: string }): Promise<CreditAnswer> {
    const [answer, session] = await Promise.all([
      credit(ref.projectId),
      ref.sessionId ? readOwn(ref.projectId, "ledger-session", ref.sessionId) : undefined,
    ]);
    if (answer.balance && !answer.balance.greaterThan(ZERO)) {
      throw new InsufficientCreditError("Insufficient credits");
    }
    const cap = session?.state.cap;
    if (session && cap && !session.state.totals.totalCostUsd.lessThan(cap)) {
      throw new InsufficientCreditError("Insufficient credits");
    }
    return answer;
  }

  async function setCredit(projectId: string, limitUsd: string | undefined): Promise<CreditAnswer> {
    requireProject(projectId);
    const limit = limitUsd === undefined ? undefined : parseAmount(limitUsd, "limitUsd", { allowZero: true });
    await credits.set(projectId, limit?.toFixed());
    return credit(projectId);
  }

  return { checkBudget, getTotals, credit, requireCredit, setCredit };
}

export type BudgetQueries = ReturnType<typeof createBudgetQueries>;
