import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "@bas/embedded-infra";
import { commandOf, eventually, processesOfRun } from "@bas/testing";

const ROOT = resolve(__dirname, "../..");
/** What a stop may take, every process of the stack included: the launcher's promise. */
const STOP_WITHIN_MS = 20_000;
const START_MS = 120_000;

/**
 * `npm start` as a terminal runs it: npm, its shell and the launcher in a process group of their own, which a
 * terminal's signal (or `kill -- -PGID`) reaches as a whole. Every process it starts carries STOP_TEST_DATA in its
 * environment or the data dir on its command line.
 */
function npmStart(dataDir: string, port: number): ChildProcess {
  const { NATS_URL: _nats, DATABASE_URL: _db, ...env } = process.env;
  return spawn("npm", ["start"], {
    cwd: ROOT,
    env: { ...env, DATA_DIR: dataDir, PORT: String(port), STOP_TEST_DATA: dataDir },
    stdio: "ignore",
    detached: true,
  });
}

const stackCommands = (dataDir: string) =>
  processesOfRun(dataDir, [], "STOP_TEST_DATA").map((pid) => commandOf(pid) ?? "");

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

const healthy = (port: number) =>
  fetch(`http://127.0.0.1:${port}/healthz`).then(
    (res) => res.status === 200,
    () => false,
  );

/** The moments a person may press Ctrl-C, or a supervisor send SIGTERM, each caught as closely as polling can. */
const MOMENTS: Array<[string, (dataDir: string, port: number) => Promise<unknown>]> = [
  [
    "while NATS and Postgres start",
    (dataDir) =>
      eventually(
        async () => stackCommands(dataDir),
        (c) => c.some((c) => c.includes("nats-server")),
        START_MS,
      ),
  ],
  [
    "while the services start",
    (dataDir) =>
      eventually(
        async () => stackCommands(dataDir),
        (c) => c.some((c) => c.includes("services/")),
        START_MS,
      ),
  ],
  ["the moment /healthz first answers 200", (_dataDir, port) => eventually(() => healthy(port), Boolean, START_MS)],
];

test.each(MOMENTS)(
  "SIGTERM to npm start's process group %s stops every process of the stack within 20 s",
  async (_moment, reached) => {
    const dataDir = mkdtempSync(join(tmpdir(), "bas-stack-signal-"));
    chmodSync(dataDir, 0o755); // the stack's own Postgres runs as another user
    const port = await freePort();
    const npm = npmStart(dataDir, port);
    try {
      await reached(dataDir, port);
      process.kill(-npm.pid!, "SIGTERM");
      await eventually(
        async () => ({ group: groupAlive(npm.pid!), left: stackCommands(dataDir) }),
        ({ group, left }) => !group && left.length === 0,
        STOP_WITHIN_MS,
      );
    } finally {
      if (groupAlive(npm.pid!)) process.kill(-npm.pid!, "SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
  START_MS + 30_000,
);
