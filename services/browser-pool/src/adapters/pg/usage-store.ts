import type { Generated } from "kysely";
import { type Kysely, type Migration, sql } from "kysely";
import type { UsageReport, UsageStore } from "../../app/ports";

/**
 * Usage bookkeeping: how much of each browser has been reported (cumulative marks) and the reports not yet
 * confirmed published (an outbox). A report is written together with its new mark in one transaction and published
 * afterwards, with its id as the NATS message id, so a crash between the two re-publishes it once, never twice.
 */
export const MARKS_TABLE = "browser_pool_usage_marks";
export const OUTBOX_TABLE = "browser_pool_usage_outbox";

interface UsageDb {
  [MARKS_TABLE]: { browser_id: string; browser_ms: string; proxy_bytes: string };
  [OUTBOX_TABLE]: {
    id: string;
    kind: UsageReport["kind"];
    payload: unknown;
    created_at: Generated<Date>;
    position: Generated<string>;
  };
}

export const usageMigrations: Record<string, Migration> = {
  "001_usage": {
    async up(db) {
      await sql`create table if not exists ${sql.table(MARKS_TABLE)} (
        browser_id text primary key,
        browser_ms bigint not null,
        proxy_bytes bigint not null)`.execute(db);
      await sql`create table if not exists ${sql.table(OUTBOX_TABLE)} (
        id text primary key,
        kind text not null,
        payload jsonb not null,
        created_at timestamptz not null default now())`.execute(db);
    },
  },
  // Reports written together share one created_at; a browser's last report must still go out after its proxy
  // report, so that billing has charged everything of the browser once it charges the last report.
  "002_usage_outbox_order": {
    async up(db) {
      await sql`alter table ${sql.table(OUTBOX_TABLE)} add column position bigserial`.execute(db);
    },
  },
};

export function createUsageStore(db: Kysely<any>): UsageStore {
  const q = db as Kysely<UsageDb>;
  return {
    async marks(browserId) {
      const row = await q.selectFrom(MARKS_TABLE).selectAll().where("browser_id", "=", browserId).executeTakeFirst();
      return { browserMs: Number(row?.browser_ms ?? 0), proxyBytes: Number(row?.proxy_bytes ?? 0) };
    },
    async record(browserId, marks, reports) {
      await q.transaction().execute(async (trx) => {
        const values = { browser_ms: String(marks.browserMs), proxy_bytes: String(marks.proxyBytes) };
        await trx
          .insertInto(MARKS_TABLE)
          .values({ browser_id: browserId, ...values })
          .onConflict((oc) => oc.column("browser_id").doUpdateSet(values))
          .execute();
        if (reports.length === 0) return;
        await trx
          .insertInto(OUTBOX_TABLE)
          .values(reports.map((r) => ({ id: r.id, kind: r.kind, payload: JSON.stringify(r.payload) as never })))
          .execute();
      });
    },
    async pending(limit) {
      const rows = await q.selectFrom(OUTBOX_TABLE).selectAll().orderBy("position").limit(limit).execute();
      return rows.map((r) => ({ id: r.id, kind: r.kind, payload: r.payload }));
    },
    async done(ids) {
      if (ids.length > 0) await q.deleteFrom(OUTBOX_TABLE).where("id", "in", ids).execute();
    },
  };
}
