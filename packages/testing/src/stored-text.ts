import { sql } from "kysely";
import type { TestInfra } from "./isolation";

/**
 * Everything a test's deployment has stored durably, as one text: every message of its NATS streams (subject,
 * headers, payload) and every row of every table of its database. A test asserts that a secret appears nowhere in it.
 */
export async function storedText(infra: TestInfra): Promise<string> {
  const parts: string[] = [];
  for (const { stream } of [infra.streams.events, infra.streams.work, infra.streams.usage, infra.streams.health]) {
    const info = await infra.jsm.streams.info(stream);
    for (let seq = info.state.first_seq; info.state.messages > 0 && seq <= info.state.last_seq; seq++) {
      const m = await infra.jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (m) parts.push(m.subject, m.header?.toString() ?? "", m.string());
    }
  }
  const tables = await sql<{ schema: string; name: string }>`
    select table_schema as schema, table_name as name from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`.execute(infra.db);
  for (const t of tables.rows) {
    const rows = await sql`select * from ${sql.id(t.schema, t.name)}`.execute(infra.db);
    parts.push(`${t.schema}.${t.name}`, JSON.stringify(rows.rows));
  }
  return parts.join("\n");
}
