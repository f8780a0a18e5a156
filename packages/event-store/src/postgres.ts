import { Kysely, type Migration, Migrator, PostgresDialect, sql, type Transaction } from "kysely";
import { Pool } from "pg";

/**
 * A kysely instance over a pg pool: a new one, or one it shares with what takes a pool (destroying the instance ends
 * it). With `connectionTimeoutMs`, a query that cannot get a connection in that time fails (pg's "timeout exceeded
 * when trying to connect") instead of waiting for one forever.
 */
export function createDb<DB>(connection: string | Pool, options: PoolOptions = {}): Kysely<DB> {
  const pool = typeof connection === "string" ? createPool(connection, options) : connection;
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

export interface PoolOptions {
  max?: number;
  connectionTimeoutMs?: number;
}

/**
 * Postgres probes each of our connections after 10 s of silence: a lock or transaction held by a replica whose node
 * died without a word (power, a kernel panic) goes within half a minute, not after the server default's two hours.
 */
const PROBE_WHEN_SILENT = `select set_config('tcp_keepalives_idle', '10', false),
  set_config('tcp_keepalives_interval', '5', false), set_config('tcp_keepalives_count', '3', false)`;

/** A pg pool whose dropped connections fail their queries, not the process. */
export function createPool(connectionString: string, options: PoolOptions = {}): Pool {
  const pool = new Pool({
    connectionString,
    max: options.max ?? 10,
    ...(options.connectionTimeoutMs ? { connectionTimeoutMillis: options.connectionTimeoutMs } : {}),
  });
  // A connection can drop (Postgres restarted, the backend was terminated); without a listener that error would
  // crash the process. The pool reports it for idle clients; a checked-out client (a projection's leader connection,
  // a lock holder) reports it on itself, and its pending query fails on its own.
  pool.on("error", () => undefined);
  pool.on("connect", (client) => {
    client.on("error", () => undefined);
    // Queued before anything the client is then asked (a client runs its queries in order).
    client.query(PROBE_WHEN_SILENT).catch(() => undefined);
  });
  return pool;
}

/**
 * Runs a service's migrations at start-up. Each service keeps its own migration table, so several services can share
 * one database without stepping on each other's history.
 */
export async function migrate(db: Kysely<any>, owner: string, migrations: Record<string, Migration>): Promise<void> {
  // Migrations run in name order, and a database refuses a new one that sorts before one it already ran: two of the
  // same number ("003_a" and "003_b") break every deployment that ran the first. Each number is used once.
  const numbers = Object.keys(migrations).map((name) => name.split("_")[0]);
  const twice = numbers.find((n, i) => numbers.indexOf(n) !== i);
  if (twice)
    throw new Error(`migrations of ${owner} use the number ${twice} twice: give the newer one the next number`);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: `${owner}_migrations`,
    migrationLockTableName: `${owner}_migrations_lock`,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName;
    throw new Error(`migration ${failed ?? "(unknown)"} of ${owner} failed`, { cause: error });
  }
}

/**
 * Holds an advisory lock on `key` until `trx` ends: transactions of every replica that lock the same key take turns,
 * so a count and the insert it allows cannot interleave with another's (a per-project limit).
 */
export async function lockUntilCommit(trx: Transaction<any>, key: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
}
