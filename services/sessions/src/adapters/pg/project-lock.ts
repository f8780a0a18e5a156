import { UnavailableError } from "@bas/errors";
import { type Kysely, type Migration, sql } from "kysely";
import { createKeyedTurns, createSemaphore } from "../../app/bounded-turns";
import type { CallDeadline } from "../../app/call-deadline";
import type { LockedProject, ProjectLock } from "../../app/ports";
import { ACTIVE_STATUSES } from "../../domain/state";
import type { SessionsDb } from "./schema";

/**
 * Sessions created (or reopened) under the lock that the read model may not show yet. The lock is released as soon as
 * the events are appended, without waiting for the projection; the next holder counts these on top of the read
 * model until its row counts it (has applied the append's version, or shows it active), so the limit holds however far
 * the projection lags.
 */
export const projectLockMigrations: Record<string, Migration> = {
  "002_session_create_reservations": {
    async up(db) {
      await sql`create table session_create_reservations (
        project_id text not null,
        session_id text not null,
        created_at timestamptz not null default now(),
        primary key (project_id, session_id))`.execute(db);
    },
  },
  "004_session_reservation_version": {
    async up(db) {
      // 0 for reservations made before: any row of the session covers them, as it did.
      await sql`alter table session_create_reservations add column version bigint not null default 0`.execute(db);
    },
  },
};

/** The read model counts the session already: it has applied what the reservation stands for, or shows it active. */
const shown = sql<boolean>`exists (select 1 from sessions_view v
  where v.id = session_create_reservations.session_id
    and (v.version >= session_create_reservations.version
      or (not v.deleted and v.status in (${sql.join([...ACTIVE_STATUSES])}))))`;

export interface PgProjectLockOptions {
  /** A pool of the lock's own: holders never take connections from reads or projections, nor the other way round. */
  db: Kysely<SessionsDb>;
  /** Connections of that pool; more holders than this wait in line (bounded by their deadline). */
  maxConnections: number;
  /** Name space of the advisory lock keys. */
  scope: string;
}

/** Postgres `lock_not_available`: `lock_timeout` ran out. */
const LOCK_NOT_AVAILABLE = "55P03";

function lockedProject(trx: Kysely<SessionsDb>, projectId: string): LockedProject {
  return {
    async countActive() {
      // One statement, one snapshot: a row the projection commits meanwhile is counted once, as a row or a
      // reservation, never as both.
      const { rows } = await sql<{ n: string }>`select
          (select count(*) from sessions_view
            where project_id = ${projectId} and not deleted and status in (${sql.join([...ACTIVE_STATUSES])}))
          + (select count(*) from session_create_reservations
            where project_id = ${projectId} and not ${shown}) as n`.execute(trx);
      // Reservations the read model has caught up with are done.
      await trx.deleteFrom("session_create_reservations").where("project_id", "=", projectId).where(shown).execute();
      return Number(rows[0]?.n ?? 0);
    },
    async reserve(sessionId, version) {
      await trx
        .insertInto("session_create_reservations")
        .values({ project_id: projectId, session_id: sessionId, version })
        .onConflict((oc) => oc.columns(["project_id", "session_id"]).doUpdateSet({ version }))
        .execute();
    },
  };
}

/**
 * A per-project lock for every replica: a Postgres transaction-scoped advisory lock, on a connection of the lock's
 * own pool, whose holder does its reads and writes on that same connection (it never asks a pool for a second one,
 * which is how a burst of creates once drained the pool and froze every project). On this replica, creates of one
 * project wait their turn in memory first, so a burst holds one connection per project, not one per request.
 * Every wait is bounded by the caller's deadline; running out is `UnavailableError` with nothing done.
 */
export function createProjectLock(options: PgProjectLockOptions): ProjectLock {
  const turns = createKeyedTurns("creating a session");
  const connections = createSemaphore(options.maxConnections, "creating a session");
  return {
    async run(projectId, deadline: CallDeadline, fn) {
      const releaseTurn = await turns(projectId, deadline.waitBudgetMs());
      try {
        const releaseConnection = await connections(deadline.waitBudgetMs());
        try {
          return await options.db.transaction().execute(async (trx) => {
            const waitMs = Math.floor(deadline.waitBudgetMs());
            if (waitMs < 1) throw new UnavailableError("creating a session could not be done in time; retry shortly");
            await sql`select set_config('lock_timeout', ${`${waitMs}ms`}, true)`.execute(trx);
            await sql`select pg_advisory_xact_lock(hashtext(${`${options.scope}:${projectId}`}))`.execute(trx);
            return fn(lockedProject(trx, projectId));
          });
        } catch (err) {
          if ((err as { code?: unknown }).code === LOCK_NOT_AVAILABLE) {
            throw new UnavailableError("creating a session could not be done in time; retry shortly", { cause: err });
          }
          throw err;
        } finally {
          releaseConnection();
        }
      } finally {
        releaseTurn();
      }
    },
  };
}
