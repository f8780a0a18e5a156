import type { Projection, StoredEvent } from "@bas/event-store";
import { type Kysely, sql } from "kysely";
import { PROFILE_AGGREGATE, type ProfileEvent } from "../../domain/profile";
import type { ProfileView } from "../../app/ports";

export const PROFILES_TABLE = "browser_pool_profiles";
/**
 * Saved states nothing will start from any more (replaced by a newer save, or their profile deleted), until they are
 * deleted: the node that let one go deletes it at once, and the sweep again until that succeeds.
 */
const RELEASED_TABLE = "browser_pool_released_states";

export interface ProfilesTable {
  id: string;
  project_id: string;
  name: string | null;
  user_id: string | null;
  created_at: Date;
  updated_at: Date;
  last_used_at: Date | null;
  cookie_domains: string[];
  open_by: string | null;
  deleted: boolean;
  /** The state the next browser with the profile starts from. */
  state_ref: string | null;
}

type Db = { [PROFILES_TABLE]: ProfilesTable };

/** The profiles read model: one row per profile, written only from `profile` events. */
export function profilesProjection(): Projection<Db, ProfileEvent> {
  return {
    name: PROFILES_TABLE,
    aggregateType: PROFILE_AGGREGATE,
    canHandle: ["ProfileCreated", "ProfileUpdated", "ProfileDeleted", "ProfileOpened", "ProfileClosed"],
    async setup(db) {
      await sql`create table if not exists ${sql.table(PROFILES_TABLE)} (
        id text primary key,
        project_id text not null,
        name text,
        user_id text,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        last_used_at timestamptz,
        cookie_domains jsonb not null default '[]',
        open_by text,
        deleted boolean not null default false)`.execute(db);
      await sql`create index if not exists browser_pool_profiles_project
        on ${sql.table(PROFILES_TABLE)} (project_id, created_at desc, id) where not deleted`.execute(db);
      await sql`alter table ${sql.table(PROFILES_TABLE)} add column if not exists state_ref text`.execute(db);
      await sql`create table if not exists ${sql.table(RELEASED_TABLE)} (
        ref text primary key,
        released_at timestamptz not null)`.execute(db);
    },
    async teardown(db) {
      await sql`drop table if exists ${sql.table(PROFILES_TABLE)}`.execute(db);
      await sql`drop table if exists ${sql.table(RELEASED_TABLE)}`.execute(db);
    },
    async apply(trx, event: StoredEvent<ProfileEvent>) {
      const at = new Date(event.occurredAt);
      const row = trx.updateTable(PROFILES_TABLE).where("id", "=", event.aggregateId);
      const release = (refs: ReturnType<typeof sql>) =>
        sql`insert into ${sql.table(RELEASED_TABLE)} (ref, released_at) ${refs} on conflict do nothing`.execute(trx);
      switch (event.type) {
        case "ProfileCreated":
          await trx
            .insertInto(PROFILES_TABLE)
            .values({
              id: event.aggregateId,
              project_id: event.data.projectId,
              name: event.data.name,
              user_id: event.data.userId,
              created_at: at,
              updated_at: at,
              last_used_at: null,
              cookie_domains: JSON.stringify([]) as never,
              open_by: null,
              deleted: false,
            })
            .onConflict((oc) => oc.column("id").doNothing())
            .execute();
          return;
        case "ProfileUpdated":
          await row.set({ name: event.data.name, user_id: event.data.userId, updated_at: at }).execute();
          return;
        case "ProfileDeleted":
          await release(sql`select state_ref, ${at}::timestamptz from ${sql.table(PROFILES_TABLE)}
            where id = ${event.aggregateId} and state_ref is not null`);
          await row.set({ deleted: true, updated_at: at }).execute();
          return;
        case "ProfileOpened":
          await row.set({ open_by: event.data.browserId, last_used_at: at }).execute();
          return;
        case "ProfileClosed":
          if (event.data.replacedRef) await release(sql`values (${event.data.replacedRef}::text, ${at}::timestamptz)`);
          // The state saved is the profile's now: no longer one to sweep should its close never come (`expect`).
          if (event.data.stateRef) {
            await sql`delete from ${sql.table(RELEASED_TABLE)} where ref = ${event.data.stateRef}`.execute(trx);
          }
          await row
            .set({
              open_by: null,
              ...(event.data.stateRef ? { state_ref: event.data.stateRef } : {}),
              ...(event.data.cookieDomains
                ? { cookie_domains: JSON.stringify(event.data.cookieDomains) as never, updated_at: at }
                : {}),
            })
            .execute();
          return;
      }
    },
  };
}

const viewOf = (row: ProfilesTable): ProfileView => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  userId: row.user_id,
  lastUsedAt: row.last_used_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  cookieDomains: row.cookie_domains,
  openBy: row.open_by,
});

/** Reads of the profiles read model; a deleted profile, or another project's, is absent. */
export function createProfileQueries(db: Kysely<any>) {
  const profiles = () => (db as Kysely<Db>).selectFrom(PROFILES_TABLE).selectAll().where("deleted", "=", false);
  return {
    async find(projectId: string, profileId: string): Promise<ProfileView | undefined> {
      const row = await profiles().where("id", "=", profileId).where("project_id", "=", projectId).executeTakeFirst();
      return row && viewOf(row);
    },
    /** Those of `ids` that are profiles not deleted, whichever project's. */
    async live(ids: readonly string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await (db as Kysely<Db>)
        .selectFrom(PROFILES_TABLE)
        .select("id")
        .where("deleted", "=", false)
        .where("id", "in", [...ids])
        .execute();
      return new Set(rows.map((row) => row.id));
    },
    async list(projectId: string, page: { number: number; size: number }, query?: string) {
      // The text as a LIKE pattern matches itself only: its wildcards and the escape character are escaped.
      const pattern = query ? `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
      const found = sql<boolean>`(${pattern}::text is null or name ilike ${pattern} or user_id ilike ${pattern})`;
      const [rows, count] = await Promise.all([
        profiles()
          .where("project_id", "=", projectId)
          .where(found)
          .orderBy("created_at", "desc")
          .orderBy("id", "desc")
          .limit(page.size)
          .offset((page.number - 1) * page.size)
          .execute(),
        (db as Kysely<Db>)
          .selectFrom(PROFILES_TABLE)
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("project_id", "=", projectId)
          .where("deleted", "=", false)
          .where(found)
          .executeTakeFirstOrThrow(),
      ]);
      return { views: rows.map(viewOf), total: Number(count.n) };
    },
  };
}

export type ProfileQueries = ReturnType<typeof createProfileQueries>;

/**
 * The saved states released and not yet deleted (oldest first), and forgetting those deleted. A row's `released_at`
 * is when its state may go: at once for one let go, `savedGraceMs` on for a save about to be stored (`expect`).
 */
export function createReleasedStates(db: Kysely<any>, savedGraceMs = 60 * 60_000) {
  return {
    async list(limit: number): Promise<string[]> {
      const { rows } = await sql<{ ref: string }>`select ref from ${sql.table(RELEASED_TABLE)}
        where released_at <= now() order by released_at limit ${limit}`.execute(db);
      return rows.map((r) => r.ref);
    },
    /**
     * A save about to be stored, or just stored: it goes once `savedGraceMs` have passed since, unless its profile has
     * come to point at it by then (the profiles projection forgets it). So a save whose close never comes (the node
     * died first, or the profile was taken over and the delete of the save failed) leaves no bytes behind, its cookies
     * included. Told again once stored, the grace starts over: a store that outlasted it was swept meanwhile (of
     * nothing yet), and its bytes would stay.
     */
    async expect(ref: string): Promise<void> {
      await sql`insert into ${sql.table(RELEASED_TABLE)} (ref, released_at)
        values (${ref}, now() + ${savedGraceMs} * interval '1 millisecond')
        on conflict (ref) do update set released_at = excluded.released_at`.execute(db);
    },
    async forget(refs: readonly string[]): Promise<void> {
      if (refs.length === 0) return;
      await sql`delete from ${sql.table(RELEASED_TABLE)} where ref = any(${[...refs]}::text[])`.execute(db);
    },
  };
}
