import type { Projection, StoredEvent } from "@bas/event-store";
import { billing, LEDGER_AGGREGATES, type LedgerEventType } from "@bas/proto";
import { sql } from "kysely";

export const COSTS_TABLE = "browser_pool_costs";

export interface CostsTable {
  browser_id: string;
  proxy_used_mb: string;
  proxy_cost_usd: string;
  browser_cost_usd: string;
}

/**
 * Billing's running totals per browser, copied from its `ChargeRecorded` events on `ledger-browser` aggregates.
 * Each event carries the totals after the charge, so the latest one (stream order) simply replaces the row.
 */
export function browserCostsProjection(name = "browser_pool_costs"): Projection<{ [COSTS_TABLE]: CostsTable }> {
  return {
    name,
    aggregateType: LEDGER_AGGREGATES.browser,
    canHandle: ["ChargeRecorded"] satisfies LedgerEventType[],
    async setup(db) {
      await sql`create table if not exists ${sql.table(COSTS_TABLE)} (
        browser_id text primary key,
        proxy_used_mb text not null,
        proxy_cost_usd text not null,
        browser_cost_usd text not null)`.execute(db);
    },
    async teardown(db) {
      await sql`drop table if exists ${sql.table(COSTS_TABLE)}`.execute(db);
    },
    async apply(trx, event: StoredEvent) {
      const totals = billing.ChargeRecorded.fromJSON(event.data).totals;
      if (!totals) return;
      const row = {
        browser_id: event.aggregateId,
        proxy_used_mb: totals.proxyUsedMb || "0",
        proxy_cost_usd: totals.proxyCostUsd || "0",
        browser_cost_usd: totals.browserCostUsd || "0",
      };
      await trx
        .insertInto(COSTS_TABLE)
        .values(row)
        .onConflict((oc) => oc.column("browser_id").doUpdateSet(row))
        .execute();
    },
  };
}
