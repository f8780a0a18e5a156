import { setTimeout as sleep } from "node:timers/promises";
import type { NatsConnection } from "@nats-io/transport-node";
import { type Kysely, sql } from "kysely";
import { type NatsLink, natsLinkOf } from "./nats-link";

/** What the replica that leads is given. */
export interface Leadership {
  /** Whether it still holds the lock (its connection lives): ask before anything another leader must not see twice. */
  stillLeader(): Promise<boolean>;
  /** Aborted when it is cut off from NATS: it returns then, and a replica that reaches NATS leads. */
  cutOff: AbortSignal;
}

export interface RunAsLeaderDeps {
  db: Kysely<any>;
  /** The NATS connection the leader works through. */
  nc: NatsConnection;
  /** The lock's name: one leader per key. */
  key: string;
  isStopped(): boolean;
  lead(leadership: Leadership): Promise<void>;
  onError(err: unknown): void;
}

/**
 * Runs `lead` while this process holds a Postgres advisory lock, on a connection of its own: one replica leads, the
 * others wait and take over when the leader's Postgres connection goes away, or when it is cut off from NATS (it
 * would hold the lock and do nothing until it is back). A replica cut off from NATS does not try to lead. Returns
 * when `isStopped()` turns true.
 */
export async function runAsLeader(deps: RunAsLeaderDeps): Promise<void> {
  const nats = natsLinkOf(deps.nc);
  while (!deps.isStopped()) {
    try {
      if (nats.up) await leadIfFree(deps, nats);
    } catch (err) {
      if (!deps.isStopped()) deps.onError(err);
    }
    if (!deps.isStopped()) await sleep(500);
  }
}

async function leadIfFree(deps: RunAsLeaderDeps, nats: NatsLink): Promise<void> {
  await deps.db.connection().execute(async (conn) => {
    const { rows } = await sql<{
      locked: boolean;
    }>`select pg_try_advisory_lock(hashtext(${deps.key})) as locked`.execute(conn);
    if (!rows[0]?.locked) return;
    const cutOff = new AbortController();
    const stopWatching = nats.onDown(() => cutOff.abort());
    if (!nats.up) cutOff.abort();
    const stillLeader = () =>
      sql`select 1`.execute(conn).then(
        () => true,
        () => false,
      );
    try {
      await deps.lead({ stillLeader, cutOff: cutOff.signal });
    } finally {
      stopWatching();
      await sql`select pg_advisory_unlock(hashtext(${deps.key}))`.execute(conn).catch(() => undefined);
    }
  });
}
