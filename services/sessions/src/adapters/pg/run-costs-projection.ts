import type { Projection } from "@bas/event-store";
import { billing, LEDGER_AGGREGATES, type LedgerEventType } from "@bas/proto";
import { sql } from "kysely";
import type { SessionsDb } from "./schema";

/**
 * Copies the running totals billing writes on every charge of a run's ledger, keeping the latest. The tokens charged
 * say when a run's cost is complete: once they reach the tokens the run reported.
 */
export function runCostsProjection(): Projection<SessionsDb> {
  return {
    name: "sessions-run-costs",
    aggregateType: LEDGER_AGGREGATES.run,
    canHandle: ["ChargeRecorded", "BudgetExceeded"] satisfies LedgerEventType[],
    async setup(db) {
      await sql`create table if not exists v4_run_costs (
        run_id text primary key,
        sequence bigint not null,
        input_tokens bigint not null,
        output_tokens bigint not null,
        total_cost_usd text not null)`.execute(db);
    },
    async teardown(db) {
      await sql`drop table if exists v4_run_costs`.execute(db);
    },
    async apply(trx, event) {
      const totals =
        event.type === "ChargeRecorded"
          ? billing.ChargeRecorded.fromJSON(event.data).totals
          : billing.BudgetExceeded.fromJSON(event.data).totals;
      if (!totals) return;
      const update = {
        sequence: event.sequence,
        input_tokens: totals.inputTokens,
        output_tokens: totals.outputTokens,
        total_cost_usd: totals.totalCostUsd || "0",
      };
      await trx
        .insertInto("v4_run_costs")
        .values({ run_id: event.aggregateId, ...update })
        .onConflict((oc) =>
          oc.column("run_id").doUpdateSet(update).where("v4_run_costs.sequence", "<", sql<string>`${event.sequence}`),
        )
        .execute();
    },
  };
}
