import { type Kysely, type Migration, sql } from "kysely";

/** Billing's own tables (the ledgers themselves live in the event store). */
export const billingMigrations: Record<string, Migration> = {
  "001_usage_ids_and_credit_limits": {
    async up(db: Kysely<any>) {
      // First stream sequence each usage id was seen at: a fact re-published under the same id is a duplicate.
      await db.schema
        .createTable("billing_usage_ids")
        .addColumn("usage_id", "text", (c) => c.primaryKey())
        .addColumn("sequence", "bigint", (c) => c.notNull())
        .addColumn("seen_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
      await db.schema.createIndex("billing_usage_ids_seen_at").on("billing_usage_ids").column("seen_at").execute();
      await db.schema
        .createTable("billing_credit_limits")
        .addColumn("project_id", "text", (c) => c.primaryKey())
        .addColumn("limit_usd", "numeric", (c) => c.notNull())
        .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
    },
  },
};

export interface BillingTables {
  billing_usage_ids: { usage_id: string; sequence: string | number; seen_at?: Date };
  billing_credit_limits: { project_id: string; limit_usd: string; updated_at?: Date };
  billing_session_caps: { session_id: string; project_id: string; max_cost_usd: string | null };
}
