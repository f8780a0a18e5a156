import { createCipheriv, randomBytes, randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { createDb, migrate } from "@bas/event-store";
import { createTestDatabase } from "@bas/testing";
import { createSecretsVault, secretsMigrations } from "../src/adapters/pg/secrets-vault";
import type { SessionsDb } from "../src/adapters/pg/schema";

const key = randomBytes(32);
let db: Kysely<SessionsDb>;
beforeAll(async () => {
  db = createDb<SessionsDb>(await createTestDatabase(), { max: 2 });
  await migrate(db, "sessions", secretsMigrations);
});
afterAll(() => db?.destroy());

/** A row as the vault wrote it before proxy credentials: the values' JSON alone, encrypted the same way. */
async function putOldRow(sessionId: string, taskId: string, values: Record<string, string>) {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(`${sessionId}/${taskId}`));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(values), "utf8"), cipher.final()]);
  await db
    .insertInto("session_secrets")
    .values({ session_id: sessionId, task_id: taskId, iv, tag: cipher.getAuthTag(), ciphertext })
    .execute();
}

test("a task's values and its proxy's credentials are kept together, encrypted, and forgotten together", async () => {
  const vault = createSecretsVault(db, key);
  const [sessionId, taskId] = [randomUUID(), randomUUID()];
  const secrets = { values: { pin: "4711" }, proxyCredentials: { username: "u-x", password: "pw-Secret-9" } };
  await vault.put(sessionId, taskId, secrets);
  expect(await vault.get(sessionId, taskId)).toEqual(secrets);
  const row = await db.selectFrom("session_secrets").select("ciphertext").where("task_id", "=", taskId).execute();
  expect(row[0].ciphertext.toString("latin1")).not.toContain("pw-Secret-9");

  // Credentials alone (a run with a proxy and no secret bindings), and values alone.
  const onlyProxy = { values: {}, proxyCredentials: { username: "only-user" } };
  await vault.put(sessionId, "t2", onlyProxy);
  expect(await vault.get(sessionId, "t2")).toEqual(onlyProxy);
  await vault.put(sessionId, "t3", { values: { a: "1" } });
  expect(await vault.get(sessionId, "t3")).toEqual({ values: { a: "1" } });

  await vault.forget(sessionId, taskId);
  expect(await vault.get(sessionId, taskId)).toEqual({ values: {} });
});

test("rows written before version 2 (the values alone) still decode, also one whose key is named v", async () => {
  const vault = createSecretsVault(db, key);
  const sessionId = randomUUID();
  await putOldRow(sessionId, "old", { user: "alice", password: "hunter2" });
  expect(await vault.get(sessionId, "old")).toEqual({ values: { user: "alice", password: "hunter2" } });
  await putOldRow(sessionId, "old-v", { v: "2", values: "x" });
  expect(await vault.get(sessionId, "old-v")).toEqual({ values: { v: "2", values: "x" } });
});
