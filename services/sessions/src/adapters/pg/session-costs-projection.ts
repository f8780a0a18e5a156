import type { Projection } from "@bas/event-store";
import { billing, LEDGER_AGGREGATES, type LedgerEventType } from "@bas/proto";
import { sql } from "kysely";
import type { SessionsDb } from "./schema";

/** A decimal string as billing sends it, or "0" when it sent none. */
const decimal = (value: string | undefined) => (value && value.length > 0 ? value : "0");

/**
 * Copies the running totals billing writes on every `ChargeRecorded` (and `BudgetExceeded`) of a session's ledger,
 * keeping the latest: the sessions service never adds money up itself.
 */
export function sessionCostsProjection(): Projection<SessionsDb> {
  return {
    name: "sessions-costs",
    aggregateType: LEDGER_AGGREGATES.session,
    canHandle: ["ChargeRecorded", "BudgetExceeded"] satisfies LedgerEventType[],
    async setup(db) {
      await sql`create table if not exists session_costs (
        session_id text primary key,
        sequence bigint not null,
        proxy_used_mb text not null,
        llm_cost_usd text not null,
        proxy_cost_usd text not null,
        browser_cost_usd text not null,
        total_cost_usd text not null)`.execute(db);
      await sql`create table if not exists session_browser_final_charges (
        browser_id text primary key,
        session_id text not null)`.execute(db);
    },
    async teardown(db) {
      await sql`drop table if exists session_costs`.execute(db);
      await sql`drop table if exists session_browser_final_charges`.execute(db);
    },
    async apply(trx, event) {
      let totals: billing.Totals | undefined;
      if (event.type === "ChargeRecorded") {
        const charge = billing.ChargeRecorded.fromJSON(event.data);
        totals = charge.totals;
        // The charge of a browser's last usage report: the totals below now hold all of that browser.
        if (charge.lastReport && charge.browserId) {
          await trx
            .insertInto("session_browser_final_charges")
            .values({ browser_id: charge.browserId, session_id: event.aggregateId })
            .onConflict((oc) => oc.column("browser_id").doNothing())
            .execute();
        }
      } else totals = billing.BudgetExceeded.fromJSON(event.data).totals;
      if (!totals) return;
      const values = {
        session_id: event.aggregateId,
        sequence: event.sequence,
        proxy_used_mb: decimal(totals.proxyUsedMb),
        llm_cost_usd: decimal(totals.llmCostUsd),
        proxy_cost_usd: decimal(totals.proxyCostUsd),
        browser_cost_usd: decimal(totals.browserCostUsd),
        total_cost_usd: decimal(totals.totalCostUsd),
      };
      const { session_id: _, ...update } = values;
      await trx
        .insertInto("session_costs")
        .values(values)
        .onConflict((oc) =>
          oc
            .column("session_id")
            .doUpdateSet(update)
            .where("session_costs.sequence", "<", sql<string>`${event.sequence}`),
        )
        .execute();
    },
  };
}
