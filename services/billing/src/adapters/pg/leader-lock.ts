import { setTimeout as sleep } from "node:timers/promises";
import { type Kysely, sql } from "kysely";

/**
 * Runs `lead` while this process holds a Postgres advisory lock, on a connection of its own: one replica leads,
 * the others wait and take over when the leader's connection goes away. `lead` gets `stillLeader()` to ask before
 * anything another leader must not see twice (the lock lives as long as that connection). Returns when
 * `isStopped()` turns true.
 */
export async function runAsLeader(
  db: Kysely<any>,
  key: string,
  isStopped: () => boolean,
  lead: (stillLeader: () => Promise<boolean>) => Promise<void>,
  onError: (err: unknown) => void,
): Promise<void> {
  while (!isStopped()) {
    try {
      await db.connection().execute(async (conn) => {
        const { rows } = await sql<{
          locked: boolean;
        }>`select pg_try_advisory_lock(hashtext(${key})) as locked`.execute(conn);
        if (!rows[0]?.locked) return;
        const stillLeader = () =>
          sql`select 1`.execute(conn).then(
            () => true,
            () => false,
          );
        try {
          await lead(stillLeader);
        } finally {
          await sql`select pg_advisory_unlock(hashtext(${key}))`.execute(conn).catch(() => undefined);
        }
      });
    } catch (err) {
      if (!isStopped()) onError(err);
    }
    if (!isStopped()) await sleep(500);
  }
}
