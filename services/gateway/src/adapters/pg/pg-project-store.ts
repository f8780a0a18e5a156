import { IllegalStateError } from "@bas/errors";
import { type Kysely, sql } from "kysely";
import type { ApiKeyRecord, ProjectRecord, ProjectStore } from "../../app/project-store";
import type { GatewayDatabase } from "./schema";

/** The Postgres channel on which a revocation is announced, with the key id as payload. */
export const KEY_REVOKED_CHANNEL = "gateway_api_key_revoked";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const toProject = (row: { id: string; name: string; created_at: Date }): ProjectRecord => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
});

const toKey = (row: {
  id: string;
  project_id: string;
  label: string;
  prefix: string;
  created_at: Date;
  revoked_at: Date | null;
}): ApiKeyRecord => ({
  id: row.id,
  projectId: row.project_id,
  label: row.label,
  prefix: row.prefix,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
});

const KEY_COLUMNS = ["id", "project_id", "label", "prefix", "created_at", "revoked_at"] as const;

export function createPgProjectStore(db: Kysely<GatewayDatabase>): ProjectStore {
  return {
    async createProject({ id, name }) {
      const row = await db
        .insertInto("gateway_projects")
        .values({ id, name })
        .onConflict((oc) => oc.column("name").doNothing())
        .returningAll()
        .executeTakeFirst();
      if (!row) throw new IllegalStateError(`A project named '${name}' already exists`);
      return toProject(row);
    },

    async ensureProject({ id, name }) {
      await db
        .insertInto("gateway_projects")
        .values({ id, name })
        .onConflict((oc) => oc.column("name").doNothing())
        .execute();
      const row = await db
        .selectFrom("gateway_projects")
        .selectAll()
        .where("name", "=", name)
        .executeTakeFirstOrThrow();
      return toProject(row);
    },

    async listProjects() {
      const rows = await db.selectFrom("gateway_projects").selectAll().orderBy("created_at").orderBy("id").execute();
      return rows.map(toProject);
    },

    async findProject(idOrName) {
      const row = await db
        .selectFrom("gateway_projects")
        .selectAll()
        .where((eb) =>
          UUID.test(idOrName) ? eb.or([eb("id", "=", idOrName), eb("name", "=", idOrName)]) : eb("name", "=", idOrName),
        )
        .executeTakeFirst();
      return row ? toProject(row) : undefined;
    },

    async insertKey(key) {
      const row = await db
        .insertInto("gateway_api_keys")
        .values({ id: key.id, project_id: key.projectId, label: key.label, prefix: key.prefix, hash: key.hash })
        .returning(KEY_COLUMNS)
        .executeTakeFirstOrThrow();
      return toKey(row);
    },

    async upsertKey(key) {
      await db
        .insertInto("gateway_api_keys")
        .values({ id: key.id, project_id: key.projectId, label: key.label, prefix: key.prefix, hash: key.hash })
        .onConflict((oc) => oc.column("hash").doUpdateSet({ revoked_at: null }))
        .execute();
    },

    async keysByPrefix(prefix) {
      const rows = await db
        .selectFrom("gateway_api_keys")
        .select(["id", "project_id", "hash", "revoked_at"])
        .where("prefix", "=", prefix)
        .execute();
      return rows.map((r) => ({ id: r.id, projectId: r.project_id, hash: r.hash, revokedAt: r.revoked_at }));
    },

    async revokeKey(keyId) {
      if (!UUID.test(keyId)) return false;
      return db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable("gateway_api_keys")
          .set({ revoked_at: sql<Date>`coalesce(revoked_at, now())` })
          .where("id", "=", keyId)
          .returning("id")
          .executeTakeFirst();
        if (!row) return false;
        // Delivered at commit to every gateway listening, which drop the key from their caches.
        await sql`select pg_notify(${KEY_REVOKED_CHANNEL}, ${keyId})`.execute(trx);
        return true;
      });
    },

    async listKeys(projectId) {
      const rows = await db
        .selectFrom("gateway_api_keys")
        .select(KEY_COLUMNS)
        .where("project_id", "=", projectId)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
      return rows.map(toKey);
    },
  };
}
