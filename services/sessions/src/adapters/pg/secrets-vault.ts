import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { type Kysely, type Migration, sql } from "kysely";
import type { SecretsVault, TaskSecrets } from "../../app/ports";
import type { SessionsDb } from "./schema";

/** The vault's table is source data (not a read model): it is migrated, never rebuilt. */
export const secretsMigrations: Record<string, Migration> = {
  "001_session_secrets": {
    async up(db) {
      await sql`create table session_secrets (
        session_id text not null,
        task_id text not null,
        iv bytea not null,
        tag bytea not null,
        ciphertext bytea not null,
        created_at timestamptz not null default now(),
        primary key (session_id, task_id))`.execute(db);
    },
  },
};

/**
 * A row's plaintext: `{"v":2,"values":{...},"proxyCredentials":{...}}`. Rows written before version 2 hold the
 * values alone (`{"key":"value"}`, all strings), so a numeric `v` tells the two apart.
 */
function encodeSecrets(secrets: TaskSecrets): string {
  const { values, proxyCredentials } = secrets;
  return JSON.stringify({ v: 2, values, ...(proxyCredentials ? { proxyCredentials } : {}) });
}

function decodeSecrets(plain: string): TaskSecrets {
  const stored = JSON.parse(plain);
  if (typeof stored.v !== "number") return { values: stored };
  return {
    values: stored.values ?? {},
    ...(stored.proxyCredentials ? { proxyCredentials: stored.proxyCredentials } : {}),
  };
}

/**
 * A task's secrets (sensitiveData values, a custom proxy's credentials) under AES-256-GCM, one row per session and
 * task. The row's own ids are the additional authenticated data, so a ciphertext copied to another task's row does
 * not decrypt.
 */
export function createSecretsVault(db: Kysely<SessionsDb>, key: Buffer): SecretsVault {
  if (key.length !== 32) throw new Error("the secrets key must be 32 bytes");
  const aad = (sessionId: string, taskId: string) => Buffer.from(`${sessionId}/${taskId}`);

  async function put(sessionId: string, taskId: string, secrets: TaskSecrets): Promise<void> {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(aad(sessionId, taskId));
    const ciphertext = Buffer.concat([cipher.update(encodeSecrets(secrets), "utf8"), cipher.final()]);
    const row = { session_id: sessionId, task_id: taskId, iv, tag: cipher.getAuthTag(), ciphertext };
    await db
      .insertInto("session_secrets")
      .values(row)
      .onConflict((oc) => oc.columns(["session_id", "task_id"]).doUpdateSet({ iv, tag: row.tag, ciphertext }))
      .execute();
  }

  async function get(sessionId: string, taskId: string): Promise<TaskSecrets> {
    const row = await db
      .selectFrom("session_secrets")
      .select(["iv", "tag", "ciphertext"])
      .where("session_id", "=", sessionId)
      .where("task_id", "=", taskId)
      .executeTakeFirst();
    if (!row) return { values: {} };
    const decipher = createDecipheriv("aes-256-gcm", key, row.iv);
    decipher.setAAD(aad(sessionId, taskId));
    decipher.setAuthTag(row.tag);
    const plain = Buffer.concat([decipher.update(row.ciphertext), decipher.final()]);
    return decodeSecrets(plain.toString("utf8"));
  }

  async function forget(sessionId: string, taskId?: string): Promise<void> {
    let query = db.deleteFrom("session_secrets").where("session_id", "=", sessionId);
    if (taskId) query = query.where("task_id", "=", taskId);
    await query.execute();
  }

  return { put, get, forget };
}
