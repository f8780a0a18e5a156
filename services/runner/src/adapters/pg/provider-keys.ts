import { type Kysely, type Migration, sql } from "kysely";
import { IllegalStateError } from "@bas/errors";
import type { KeyCipher } from "../crypto/key-cipher";

interface ProviderKeysTable {
  project_id: string;
  provider: string;
  sealed_key: string;
  key_hint: string;
  updated_at: Date;
}

export interface RunnerDb {
  runner_provider_keys: ProviderKeysTable;
}

export const providerKeyMigrations: Record<string, Migration> = {
  "001_provider_keys": {
    async up(db) {
      await db.schema
        .createTable("runner_provider_keys")
        .addColumn("project_id", "text", (c) => c.notNull())
        .addColumn("provider", "text", (c) => c.notNull())
        .addColumn("sealed_key", "text", (c) => c.notNull())
        .addColumn("key_hint", "text", (c) => c.notNull())
        .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint("runner_provider_keys_pk", ["project_id", "provider"])
        .execute();
    },
  },
};

export interface ProviderKeyInfo {
  projectId: string;
  provider: string;
  keyHint: string;
  updatedAt: Date;
}

/** Projects' own provider keys (use_own_key), encrypted at rest; the plain key only leaves through `get`. */
export interface ProviderKeys {
  set(projectId: string, provider: string, apiKey: string): Promise<ProviderKeyInfo>;
  delete(projectId: string, provider: string): Promise<void>;
  list(projectId: string): Promise<ProviderKeyInfo[]>;
  has(projectId: string, provider: string): Promise<boolean>;
  get(projectId: string, provider: string): Promise<string | undefined>;
}

const hint = (key: string) => (key.length > 8 ? key.slice(-4) : "");

export function createProviderKeys(
  db: Kysely<RunnerDb>,
  cipher: KeyCipher | undefined,
  now: () => Date = () => new Date(),
): ProviderKeys {
  const toInfo = (
    r: Pick<ProviderKeysTable, "project_id" | "provider" | "key_hint" | "updated_at">,
  ): ProviderKeyInfo => ({
    projectId: r.project_id,
    provider: r.provider,
    keyHint: r.key_hint,
    updatedAt: r.updated_at,
  });
  return {
    async set(projectId, provider, apiKey) {
      if (!cipher)
        throw new IllegalStateError("this runner cannot store provider keys: PROVIDER_KEY_SECRET is not configured");
      const row = {
        project_id: projectId,
        provider,
        sealed_key: cipher.encrypt(apiKey),
        key_hint: hint(apiKey),
        updated_at: now(),
      };
      await db
        .insertInto("runner_provider_keys")
        .values(row)
        .onConflict((oc) =>
          oc
            .columns(["project_id", "provider"])
            .doUpdateSet({ sealed_key: row.sealed_key, key_hint: row.key_hint, updated_at: row.updated_at }),
        )
        .execute();
      return toInfo(row);
    },
    async delete(projectId, provider) {
      await db
        .deleteFrom("runner_provider_keys")
        .where("project_id", "=", projectId)
        .where("provider", "=", provider)
        .execute();
    },
    async list(projectId) {
      const rows = await db
        .selectFrom("runner_provider_keys")
        .select(["project_id", "provider", "key_hint", "updated_at"])
        .where("project_id", "=", projectId)
        .orderBy("provider")
        .execute();
      return rows.map(toInfo);
    },
    async has(projectId, provider) {
      const row = await db
        .selectFrom("runner_provider_keys")
        .select("provider")
        .where("project_id", "=", projectId)
        .where("provider", "=", provider)
        .executeTakeFirst();
      return !!row;
    },
    async get(projectId, provider) {
      const row = await db
        .selectFrom("runner_provider_keys")
        .select("sealed_key")
        .where("project_id", "=", projectId)
        .where("provider", "=", provider)
        .executeTakeFirst();
      if (!row) return undefined;
      if (!cipher)
        throw new IllegalStateError("PROVIDER_KEY_SECRET is not configured: stored provider keys cannot be read");
      return cipher.decrypt(row.sealed_key);
    },
  };
}
