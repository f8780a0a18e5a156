import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { Client } from "pg";
import { findPostgresBin } from "./binaries";
import { freePort } from "./free-port";

export interface EmbeddedPostgres {
  /** Connection string of `database` on this cluster. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

export interface PostgresOptions {
  dataDir: string;
  database: string;
  port?: number;
  /** Trade durability for speed; for throwaway test clusters only. */
  fast?: boolean;
}

const isRoot = () => userInfo().uid === 0;

/** Postgres refuses to run as root: as root, run its programs as the `postgres` user. */
function pgExec(bin: string, program: string, args: string[]) {
  const cmd = join(bin, program);
  if (isRoot()) execFileSync("runuser", ["-u", "postgres", "--", cmd, ...args], { stdio: "pipe" });
  else execFileSync(cmd, args, { stdio: "pipe" });
}

function prepareDataDir(dataDir: string) {
  mkdirSync(dataDir, { recursive: true });
  if (!isRoot()) return;
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  chownSync(dataDir, uid, gid);
  chmodSync(dataDir, 0o700);
  try {
    execFileSync("runuser", ["-u", "postgres", "--", "test", "-w", dataDir]);
  } catch {
    throw new Error(
      `the postgres user cannot reach ${dataDir} (a parent folder is not traversable); set DATA_DIR to a folder outside it or set DATABASE_URL`,
    );
  }
}

/** Creates (first time) and starts a PostgreSQL cluster on loopback, and the database asked for. */
export async function startPostgres(options: PostgresOptions): Promise<EmbeddedPostgres> {
  const bin = findPostgresBin();
  const { dataDir } = options;
  prepareDataDir(dataDir);
  if (!existsSync(join(dataDir, "PG_VERSION"))) {
    pgExec(bin, "initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  }
  // A cluster left running by a launcher that was killed: stop it, then start it on our terms.
  if (existsSync(join(dataDir, "postmaster.pid"))) {
    try {
      pgExec(bin, "pg_ctl", ["-D", dataDir, "-w", "-m", "fast", "stop"]);
    } catch {
      // Not running: a stale pid file, which pg_ctl start handles.
    }
  }
  const port = options.port ?? (await freePort());
  const settings = [
    `-p ${port}`,
    `-k ${tmpdir()}`,
    "-c listen_addresses=127.0.0.1",
    "-c max_connections=300",
    ...(options.fast ? ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"] : []),
  ];
  const logFile = join(dataDir, "server.log");
  if (isRoot() && !existsSync(logFile)) writeFileSync(logFile, "");
  if (isRoot()) execFileSync("chown", ["postgres", logFile]);
  pgExec(bin, "pg_ctl", ["-D", dataDir, "-w", "-t", "60", "-l", logFile, "-o", settings.join(" "), "start"]);
  const stop = async () => {
    try {
      pgExec(bin, "pg_ctl", ["-D", dataDir, "-w", "-m", "fast", "stop"]);
    } catch {
      // Already stopped.
    }
  };
  const base = `postgres://postgres@127.0.0.1:${port}`;
  try {
    await createDatabaseIfMissing(`${base}/postgres`, options.database);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `${base}/${options.database}`, port, stop };
}

export async function createDatabaseIfMissing(adminUrl: string, database: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query("select 1 from pg_database where datname = $1", [database]);
    if (!rowCount) await client.query(`create database "${database.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}
