import { type Kysely, type Migration, type RawBuilder, sql } from "kysely";
import type { ProjectAdmissions } from "../../app/ports";
import { BROWSERS_TABLE } from "./browsers-projection";

export const ADMISSIONS_TABLE = "browser_pool_admissions";

/**
 * How long an admission counts at most before the read model shows its browser. Recording a browser takes
 * milliseconds after its admission (seconds when its profile is being saved elsewhere); this bounds what a node that
 * died in between leaves counted.
 */
const ADMISSION_TTL = "5 minutes";

/** An admission that still counts: recent, and its browser not in the read model (`browser_pool_browsers`) yet. */
const pending = sql`a.admitted_at > now() - interval '${sql.raw(ADMISSION_TTL)}'
  and not exists (select 1 from ${sql.table(BROWSERS_TABLE)} b where b.id = a.browser_id)`;

/** The project's browsers that other nodes run, start or have admitted, in one statement (one snapshot). */
const countElsewhere = (projectId: RawBuilder<unknown>, nodeId: RawBuilder<unknown>) => sql`
  (select count(*) from ${sql.table(BROWSERS_TABLE)}
    where project_id = ${projectId} and node_id <> ${nodeId} and status <> 'stopped')
  + (select count(*) from ${sql.table(ADMISSIONS_TABLE)} a
    where a.project_id = ${projectId} and a.node_id <> ${nodeId} and ${pending})`;

export const admissionMigrations: Record<string, Migration> = {
  "001_admissions": {
    async up(db) {
      await sql`create table ${sql.table(ADMISSIONS_TABLE)} (
        browser_id text primary key,
        project_id text not null,
        node_id text not null,
        admitted_at timestamptz not null default now())`.execute(db);
      await sql`create index ${sql.raw(`${ADMISSIONS_TABLE}_project`)} on ${sql.table(ADMISSIONS_TABLE)} (project_id)`.execute(
        db,
      );
      // One call, one round trip, under a per-project lock of every node. The count after the lock is a statement of
      // its own, so it sees what the holder before committed (each statement of a volatile function takes a new
      // snapshot); and one statement counts rows and admissions, so a browser is counted once, as one or the other.
      await sql`create function browser_pool_admit(p_project text, p_node text, p_browser text, p_here int, p_limit int)
        returns int language plpgsql volatile as $$
        declare elsewhere int;
        begin
          -- An admission matters for the seconds its create takes: its commit need not wait for the disk.
          perform set_config('synchronous_commit', 'off', true);
          perform pg_advisory_xact_lock(hashtextextended('browser_pool_admit:' || p_project, 0));
          select ${countElsewhere(sql.raw("p_project"), sql.raw("p_node"))} into elsewhere;
          if elsewhere + p_here <= p_limit then
            insert into ${sql.table(ADMISSIONS_TABLE)} (browser_id, project_id, node_id)
              values (p_browser, p_project, p_node);
          end if;
          -- Admissions the read model shows now, or too old to count, are done with.
          delete from ${sql.table(ADMISSIONS_TABLE)} a where a.project_id = p_project and not (${pending});
          return elsewhere;
        end $$`.execute(db);
    },
  },
};

/**
 * A project's browsers on other nodes, in Postgres: those the read model shows launching or running, and those
 * another node has admitted that it does not show yet (a burst of creates spread over the replicas is admitted
 * before any of them is recorded).
 */
export function createProjectAdmissions(db: Kysely<any>, nodeId: string): ProjectAdmissions {
  return {
    async admit({ projectId, browserId, here, limit }) {
      const { rows } = await sql<{ elsewhere: number }>`select browser_pool_admit(
        ${projectId}, ${nodeId}, ${browserId}, ${here}, ${limit}) as elsewhere`.execute(db);
      return Number(rows[0]?.elsewhere);
    },
    async countElsewhere(projectId) {
      const { rows } = await sql<{
        n: string;
      }>`select ${countElsewhere(sql.val(projectId), sql.val(nodeId))} as n`.execute(db);
      return Number(rows[0]?.n);
    },
    async withdraw(browserId) {
      await db.deleteFrom(ADMISSIONS_TABLE).where("browser_id", "=", browserId).execute();
    },
    async forgetNode() {
      await db.deleteFrom(ADMISSIONS_TABLE).where("node_id", "=", nodeId).execute();
    },
  };
}
