import { type Kysely, sql } from "kysely";
import type { UsageRegistry } from "../../app/ports";
import type { BillingTables } from "./migrations";

/**
 * The connection string for the registry's own pool: its inserts commit without waiting for the WAL flush. The
 * registry only guards against a fact re-published under the same id after JetStream's duplicate window; losing its
 * last few hundred milliseconds in a Postgres crash costs nothing, while a flushed commit per batch would cost
 * milliseconds on every charge.
 */
export function registryDatabaseUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set("options", "-c synchronous_commit=off");
  return url.toString();
}

/** The usage-id registry in Postgres: one row per usage id, kept for `retentionDays`. */
export function createPgUsageRegistry(db: Kysely<BillingTables>): UsageRegistry & {
  prune(retentionDays: number): Promise<number>;
} {
  return {
    async claim(facts) {
      const first = new Map<string, number>();
      for (const f of facts) if (!first.has(f.usageId)) first.set(f.usageId, f.sequence);
      if (first.size === 0) return first;
      // One statement: the ids that are new come back from the insert, the others from the union's second half.
      const rows = await sql<{ usage_id: string; sequence: string }>`
        with incoming (usage_id, sequence) as (
          select * from unnest(${[...first.keys()]}::text[], ${[...first.values()]}::bigint[])
        ), inserted as (
          insert into billing_usage_ids (usage_id, sequence) select usage_id, sequence from incoming
          on conflict (usage_id) do nothing
          returning usage_id, sequence
        )
        select usage_id, sequence from inserted
        union all
        select b.usage_id, b.sequence from billing_usage_ids b join incoming i using (usage_id)
        where not exists (select 1 from inserted where inserted.usage_id = b.usage_id)`.execute(db);
      const seen = new Map<string, number>();
      for (const row of rows.rows) seen.set(row.usage_id, Number(row.sequence));
      return seen;
    },
    async prune(retentionDays) {
      const result = await db
        .deleteFrom("billing_usage_ids")
        .where("seen_at", "<", sql<Date>`now() - make_interval(days => ${retentionDays})`)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
