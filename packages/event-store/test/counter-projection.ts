import { sql } from "kysely";
import type { Projection } from "../src";
import type { CounterEvent } from "./counter";

/**
 * A read model with a non-idempotent effect on purpose: applying an event twice would double `total` and add a
 * second history row, so any duplicate application shows in the tables.
 */
export function counterProjection(table = "counters"): Projection<any, CounterEvent> {
  const history = `${table}_history`;
  return {
    name: `counter-${table}`,
    aggregateType: "counter",
    canHandle: ["Incremented", "Reset"],
    async setup(db) {
      await sql`create table if not exists ${sql.table(table)} (id text primary key, total int not null, changes int not null)`.execute(
        db,
      );
      await sql`create table if not exists ${sql.table(history)} (sequence bigint primary key, id text not null, type text not null)`.execute(
        db,
      );
    },
    async teardown(db) {
      await sql`drop table if exists ${sql.table(table)}`.execute(db);
      await sql`drop table if exists ${sql.table(history)}`.execute(db);
    },
    async apply(trx, event) {
      const delta = event.type === "Incremented" ? event.data.by : null;
      await sql`insert into ${sql.table(table)} (id, total, changes) values (${event.aggregateId}, ${delta ?? 0}, 1)
        on conflict (id) do update set
          total = case when ${delta}::int is null then 0 else ${sql.table(table)}.total + ${delta}::int end,
          changes = ${sql.table(table)}.changes + 1`.execute(trx);
      // No "on conflict" here: a duplicate application would fail loudly rather than hide.
      await sql`insert into ${sql.table(history)} (sequence, id, type) values (${event.sequence}, ${event.aggregateId}, ${event.type})`.execute(
        trx,
      );
    },
  };
}

export async function snapshot(db: any, table = "counters") {
  const rows = await sql`select id, total, changes from ${sql.table(table)} order by id`.execute(db);
  const history = await sql`select sequence, id, type from ${sql.table(`${table}_history`)} order by sequence`.execute(
    db,
  );
  return { rows: rows.rows, history: history.rows };
}
