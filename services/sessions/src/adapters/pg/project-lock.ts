import { type Kysely, sql } from "kysely";
import type { ProjectLock } from "../../app/ports";

/** A Postgres transaction-scoped advisory lock per project: held until `fn` settles, on every replica. */
export function createProjectLock(db: Kysely<any>, scope: string): ProjectLock {
  return {
    run: (projectId, fn) =>
      db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtext(${`${scope}:${projectId}`}))`.execute(trx);
        return fn();
      }),
  };
}
