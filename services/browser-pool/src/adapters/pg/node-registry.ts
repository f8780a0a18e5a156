import { type Kysely, type Migration, sql } from "kysely";
import type { NodeRegistry } from "../../app/ports";
import { BROWSERS_TABLE } from "./browsers-projection";

export const NODES_TABLE = "browser_pool_nodes";

export const nodeMigrations: Record<string, Migration> = {
  "001_nodes": {
    async up(db) {
      await sql`create table if not exists ${sql.table(NODES_TABLE)} (
        node_id text primary key,
        seen_at timestamptz not null)`.execute(db);
    },
  },
};

/** When each node was last heard from, on Postgres's clock. */
export function createNodeRegistry(db: Kysely<any>): NodeRegistry {
  return {
    async beat(nodeId) {
      await sql`insert into ${sql.table(NODES_TABLE)} (node_id, seen_at) values (${nodeId}, now())
        on conflict (node_id) do update set seen_at = now()`.execute(db);
    },
    async lostWithBrowsers(silentMs) {
      const { rows } = await sql<{ node_id: string }>`select n.node_id from ${sql.table(NODES_TABLE)} n
        where n.seen_at < now() - ${silentMs} * interval '1 millisecond'
          and exists (select 1 from ${sql.table(BROWSERS_TABLE)} b where b.node_id = n.node_id and b.status <> 'stopped')
        order by n.node_id`.execute(db);
      return rows.map((r) => r.node_id);
    },
  };
}
