import { type Kysely, type Migration, sql } from "kysely";

/** The gateway's own tables (projects and API keys), applied with `migrate(db, "gateway", migrations)`. */
export const migrations: Record<string, Migration> = {
  "0001_projects_and_api_keys": {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("gateway_projects")
        .addColumn("id", "uuid", (c) => c.primaryKey())
        .addColumn("name", "text", (c) => c.notNull().unique())
        .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
      await db.schema
        .createTable("gateway_api_keys")
        .addColumn("id", "uuid", (c) => c.primaryKey())
        .addColumn("project_id", "uuid", (c) => c.notNull().references("gateway_projects.id").onDelete("cascade"))
        .addColumn("label", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("prefix", "text", (c) => c.notNull())
        .addColumn("hash", "bytea", (c) => c.notNull().unique())
        .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
        .addColumn("revoked_at", "timestamptz")
        .execute();
      await db.schema.createIndex("gateway_api_keys_prefix").on("gateway_api_keys").column("prefix").execute();
      await db.schema
        .createIndex("gateway_api_keys_project")
        .on("gateway_api_keys")
        .columns(["project_id", "created_at"])
        .execute();
    },
  },
  // The requests of each project's current window, counted by every replica (rate-limiter-flexible's table, in the
  // shape it expects: made here so that replicas starting together do not race to create it).
  "0002_rate_limits": {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("gateway_rate_limits")
        .addColumn("key", "varchar(255)", (c) => c.primaryKey())
        .addColumn("points", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("expire", "bigint")
        .execute();
    },
  },
};
