import { execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "pg";
import { findPostgresBin } from "./binaries";
import { freePort } from "./free-port";
import { waitForExit } from "./process";
import { exitOf, type ServerProcess } from "./server-process";

export interface EmbeddedPostgres extends ServerProcess {
  /** Connection string of `database` on this cluster. */
  url: string;
  port: number;
}

export interface PostgresOptions {
  dataDir: string;
  database: string;
  port?: number;
  /** Trade durability for speed; for throwaway test clusters only. */
  fast?: boolean;
}

const isRoot = () => userInfo().uid === 0;

/** Postgres refuses to run as root: as root, its programs run as the `postgres` user. */
export function postgresUser(): { uid: number; gid: number } | undefined {
  if (!isRoot()) return undefined;
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  return { uid, gid };
}

function pgExec(bin: string, program: string, args: string[]) {
  const cmd = join(bin, program);
  if (isRoot()) execFileSync("runuser", ["-u", "postgres", "--", cmd, ...args], { stdio: "pipe" });
  else execFileSync(cmd, args, { stdio: "pipe" });
}

function prepareDataDir(dataDir: string) {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const owner = postgresUser();
  if (!owner) return;
  chownSync(dataDir, owner.uid, owner.gid);
  chmodSync(dataDir, 0o700);
  try {
    execFileSync("runuser", ["-u", "postgres", "--", "test", "-w", dataDir]);
  } catch {
    throw new Error(
      `the postgres user cannot reach ${dataDir} (a parent folder is not traversable); set DATA_DIR to a folder outside it or set DATABASE_URL`,
    );
  }
}

/**
 * Creates (first time) and starts a PostgreSQL cluster on loopback, and the database asked for. The postmaster runs
 * as a child of this process (in a process group of its own), so that whoever started it learns when it ends
 * (`exited`) and can start it again on the same data and port.
 */
export async function startPostgres(options: PostgresOptions): Promise<EmbeddedPostgres> {
  const bin = findPostgresBin();
  const { dataDir } = options;
  prepareDataDir(dataDir);
  if (!existsSync(join(dataDir, "PG_VERSION"))) {
    pgExec(bin, "initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  }
  await stopLeftover(dataDir);
  const port = options.port ?? (await freePort());
  const args = [
    "-D",
    dataDir,
    "-p",
    String(port),
    "-k",
    tmpdir(),
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "max_connections=300",
    ...(options.fast ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] : []),
  ];
  const logFile = join(dataDir, "server.log");
  const log = openSync(logFile, "a", 0o600);
  const owner = postgresUser();
  // Its own process group: a terminal's Ctrl-C must not stop Postgres before the services that still need it.
  const child = spawn(join(bin, "postgres"), args, {
    detached: true,
    stdio: ["ignore", log, log],
    uid: owner?.uid,
    gid: owner?.gid,
  });
  closeSync(log);
  const exited = exitOf(child);
  const stop = async () => {
    // SIGINT is Postgres's fast shutdown: roll back open transactions, write a checkpoint, exit.
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
    await waitForExit(child, 30_000);
  };
  const base = `postgres://postgres@127.0.0.1:${port}`;
  try {
    await waitUntilAccepting(`${base}/postgres`, exited, 60_000, logFile);
    await createDatabaseIfMissing(`${base}/postgres`, options.database);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `${base}/${options.database}`, port, pid: child.pid!, exited, stop };
}

/** Resolves once the server takes connections; rejects with the end of its log if it exits first. */
async function waitUntilAccepting(url: string, exited: Promise<string>, timeoutMs: number, logFile: string) {
  let ended: string | undefined;
  void exited.then((how) => {
    ended = how;
  });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      return;
    } catch (err) {
      if (ended !== undefined || Date.now() > deadline) {
        const log = existsSync(logFile) ? readFileSync(logFile, "utf8").slice(-2_000) : "";
        const what = ended !== undefined ? `exited (${ended}) before it was ready` : `was not ready in ${timeoutMs} ms`;
        throw new Error(`postgres ${what}:\n${log}`, { cause: err });
      }
    } finally {
      await client.end().catch(() => undefined);
    }
    await sleep(100);
  }
}

/**
 * A cluster left running by a launcher that was killed holds the data dir: stop it (fast shutdown) first. A pid
 * file naming a process that is gone, or no postmaster of this data dir, is left for the new postmaster to handle.
 */
async function stopLeftover(dataDir: string): Promise<void> {
  const pidFile = join(dataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  if (!pid || !isPostmasterOf(pid, dataDir)) return;
  process.kill(pid, "SIGINT");
  for (let i = 0; i < 600 && isPostmasterOf(pid, dataDir); i++) await sleep(50);
  if (isPostmasterOf(pid, dataDir)) process.kill(pid, "SIGKILL");
}

function isPostmasterOf(pid: number, dataDir: string): boolean {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return args.some((a) => a.endsWith("postgres")) && args.includes(dataDir);
  } catch {
    return false;
  }
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
