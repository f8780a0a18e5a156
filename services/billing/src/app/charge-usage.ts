import type { Logger } from "@bas/service-kit";
import type { LedgerCommand } from "../domain/decider";
import type { LedgerType } from "../domain/events";
import type { Money } from "../domain/money";
import { modelPrice } from "../domain/price-table";
import { type Charge, type Pricing, priceUsage } from "../domain/pricing";
import { isEmptyUsage, type Usage, usageProblem } from "../domain/usage";
import type { Ledgers } from "./ledgers";
import type { BillingMetrics, UsageRegistry } from "./ports";

export type ChargeOutcome =
  | { status: "charged"; amountUsd: Money }
  | { status: "skipped"; reason: "duplicate" | "invalid" | "empty"; detail?: string };

export interface ChargeUsageDeps {
  ledgers: Ledgers;
  registry: UsageRegistry;
  pricing: Pricing;
  /** The cap of a session or run that never said what its cap is. */
  defaultCap: Money;
  metrics: BillingMetrics;
  log: Pick<Logger, "warn">;
  /** Ledgers written at once; each ledger's own charges stay in order. */
  concurrency?: number;
}

/** The ledgers a usage is charged to; the cap applies to the run when there is one, else to the session. */
export function ledgersOf(usage: Usage): { type: LedgerType; id: string; capped: boolean }[] {
  const scopes: { type: LedgerType; id: string; capped: boolean }[] = [];
  if (usage.sessionId) scopes.push({ type: "ledger-session", id: usage.sessionId, capped: !usage.runId });
  if (usage.runId) scopes.push({ type: "ledger-run", id: usage.runId, capped: true });
  if (usage.browserId) scopes.push({ type: "ledger-browser", id: usage.browserId, capped: false });
  scopes.push({ type: "ledger-project", id: usage.projectId, capped: false });
  return scopes;
}

async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Prices a batch of usage facts (in USAGE stream order) and charges each to its ledgers: the charges of one ledger
 * go in one append, in order; different ledgers are written concurrently. Safe to run again for the same facts:
 * each ledger skips a usage at or below its watermark, and a fact re-published under the same id is recognised by
 * the registry.
 */
export function createChargeUsage(deps: ChargeUsageDeps): (usages: readonly Usage[]) => Promise<ChargeOutcome[]> {
  const { ledgers, registry, pricing, metrics } = deps;
  return async (usages) => {
    const outcomes: ChargeOutcome[] = new Array(usages.length);
    const billable: { index: number; usage: Usage }[] = [];
    for (const [index, usage] of usages.entries()) {
      const problem = usageProblem(usage);
      if (problem) outcomes[index] = { status: "skipped", reason: "invalid", detail: problem };
      // A browser's last report is charged even when empty: its charge is what says the browser's cost is complete.
      else if (isEmptyUsage(usage) && !usage.lastReport) outcomes[index] = { status: "skipped", reason: "empty" };
      else billable.push({ index, usage });
    }
    const firstSeen = await registry.claim(
      billable.map(({ usage }) => ({ usageId: usage.id, sequence: usage.sequence })),
    );

    const commands = new Map<string, { type: LedgerType; id: string; commands: LedgerCommand[] }>();
    const charges = new Map<string, Charge>();
    for (const { index, usage } of billable) {
      const seenAt = firstSeen.get(usage.id);
      if (seenAt === undefined) throw new Error(`usage ${usage.id} missing from the registry's answer`);
      if (seenAt !== usage.sequence) {
        outcomes[index] = { status: "skipped", reason: "duplicate", detail: `first seen at sequence ${seenAt}` };
        continue;
      }
      if (usage.kind === "llm" && !modelPrice(pricing.table, usage.model, pricing.canonical).listed) {
        deps.log.warn(
          { model: usage.model, fallback: pricing.table.fallbackModel },
          "model has no price; fallback used",
        );
        metrics.unpricedModel(usage.model);
      }
      const charge = priceUsage(pricing, usage);
      charges.set(usage.id, charge);
      outcomes[index] = { status: "charged", amountUsd: charge.amount };
      for (const scope of ledgersOf(usage)) {
        const key = `${scope.type}/${scope.id}`;
        const entry = commands.get(key) ?? { type: scope.type, id: scope.id, commands: [] };
        entry.commands.push({
          type: "RecordCharge",
          usageId: usage.id,
          usageSequence: usage.sequence,
          projectId: usage.projectId,
          charge,
          ...(usage.lastReport && usage.browserId ? { completesBrowser: usage.browserId } : {}),
          ...(scope.capped ? { defaultCap: deps.defaultCap } : {}),
        });
        commands.set(key, entry);
      }
    }

    await inParallel([...commands.values()], deps.concurrency ?? 32, async (ledger) => {
      const handled = await ledgers.handle(ledger.type, ledger.id, ledger.commands);
      for (const event of handled.events) {
        // Counted where it was appended, so a redelivery after a crash does not count a charge twice.
        if (event.type === "ChargeRecorded" && ledger.type === "ledger-project") {
          metrics.charged(event.data.projectId, charges.get(event.data.usageId)!);
        }
        if (event.type === "BudgetExceeded") metrics.budgetExceeded(ledger.type);
      }
    });
    for (const outcome of outcomes) if (outcome.status === "skipped") metrics.usageSkipped(outcome.reason);
    return outcomes;
  };
}
