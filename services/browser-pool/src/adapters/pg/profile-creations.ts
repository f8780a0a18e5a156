import { lockUntilCommit } from "@bas/event-store";
import { type Kysely, type Migration, sql } from "kysely";
import type { ProfileCreations } from "../../app/profiles";
import { PROFILES_TABLE } from "./profiles-projection";

export const CREATIONS_TABLE = "browser_pool_profile_creations";

export const profileCreationMigrations: Record<string, Migration> = {
  "001_profile_creations": {
    async up(db) {
      await sql`create table ${sql.table(CREATIONS_TABLE)} (
        profile_id text primary key,
        project_id text not null,
        created_at timestamptz not null default now())`.execute(db);
    },
  },
};

/**
 * A creation counts until the read model shows its profile, for at most this long (a node that died between the
 * reservation and the event leaves one behind).
 */
const CREATION_TTL = "5 minutes";

/**
 * A project's profiles against its limit, across every node: those the read model shows, and those being created that
 * it does not show yet, counted and reserved under a lock of the project's.
 */
export function createProfileCreations(db: Kysely<any>): ProfileCreations {
  return {
    async reserve({ projectId, profileId, limit }) {
      return db.transaction().execute(async (trx) => {
        await lockUntilCommit(trx, `browser_pool_profiles/${projectId}`);
        // One statement: a profile the projection shows meanwhile counts once, as a row or as a creation.
        const { rows } = await sql<{ n: string }>`select
            (select count(*) from ${sql.table(PROFILES_TABLE)} where project_id = ${projectId} and not deleted)
            + (select count(*) from ${sql.table(CREATIONS_TABLE)} c where c.project_id = ${projectId}
                and c.created_at > now() - interval '${sql.raw(CREATION_TTL)}'
                and not exists (select 1 from ${sql.table(PROFILES_TABLE)} p where p.id = c.profile_id)) as n`.execute(
          trx,
        );
        if (Number(rows[0]?.n) >= limit) return false;
        await sql`insert into ${sql.table(CREATIONS_TABLE)} (profile_id, project_id) values (${profileId}, ${projectId})`.execute(
          trx,
        );
        return true;
      });
    },
    async done(profileId) {
      await sql`delete from ${sql.table(CREATIONS_TABLE)} where profile_id = ${profileId}`.execute(db);
    },
  };
}
