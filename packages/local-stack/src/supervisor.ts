import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import { join } from "node:path";
import { waitForExit } from "@bas/embedded-infra";
import { backoffDelay, EXIT_CONFIG_ERROR } from "@bas/service-kit";

export interface ServiceSpec {
  name: string;
  /** Entry file, relative to the repository root. */
  entry: string;
  env: NodeJS.ProcessEnv;
  /** What runs the service instead of Node on `entry` (a container engine's `run`), with `env` and its own `env`. */
  command?: { program: string; args: string[]; env?: NodeJS.ProcessEnv };
}

export interface Supervisor {
  start(spec: ServiceSpec): void;
  /** From now on a service that exits is restarted quietly (during start-up, its last log lines are shown). */
  started(): void;
  /** SIGTERM to every child, in the order given, waiting for each to exit (SIGKILL after a grace period). */
  stopAll(order: string[]): Promise<void>;
  pids(): number[];
}

export interface SupervisorOptions {
  root: string;
  logDir: string;
  onEvent(msg: string): void;
  /** A service refused its configuration: starting it again cannot help. */
  onConfigError(name: string, lastLines: string[]): void;
}

const LAST_LINES = 15;

/**
 * Runs each service as its own Node process (TypeScript through tsx), logging to DATA_DIR/logs/<name>.log, and
 * restarts a service that dies unexpectedly, with backoff: a crash loses nothing (state is in NATS and Postgres).
 */
export function createSupervisor(options: SupervisorOptions): Supervisor {
  const children = new Map<string, { child: ChildProcess; spec: ServiceSpec; restarts: number }>();
  const logs = new Map<string, WriteStream>();
  let stopping = false;
  let startingUp = true;

  function launch(spec: ServiceSpec, restarts: number) {
    let log = logs.get(spec.name);
    if (!log) {
      // Logs can hold what callers sent: their owner's alone, like the folder they are in.
      log = createWriteStream(join(options.logDir, `${spec.name}.log`), { flags: "a", mode: 0o600 });
      logs.set(spec.name, log);
    }
    // Detached (own process group): a Ctrl-C reaches only the launcher, which then stops the services in order.
    // The stdin pipe is the lifeline: when the launcher dies, however it dies, the service sees it close and exits.
    const { program, args } = spec.command ?? { program: process.execPath, args: ["--import", "tsx", spec.entry] };
    const child = spawn(program, args, {
      cwd: options.root,
      env: { ...spec.env, ...spec.command?.env, EXIT_WITH_PARENT: "1" },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    const lastLines = tail(child, LAST_LINES);
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    children.set(spec.name, { child, spec, restarts });
    const startedAt = Date.now();
    child.on("exit", (code, signal) => {
      if (stopping) return;
      if (code === EXIT_CONFIG_ERROR) return options.onConfigError(spec.name, lastLines());
      // A service that ran for a while gets a fresh restart budget.
      const count = Date.now() - startedAt > 60_000 ? 0 : restarts + 1;
      const delay = backoffDelay(count + 1, { maxMs: 10_000 });
      const why = startingUp ? `; its last lines:\n${indent(lastLines())}` : "";
      options.onEvent(`${spec.name} exited (${signal ?? code}); restarting in ${delay} ms${why}`);
      setTimeout(() => !stopping && launch(spec, count), delay);
    });
  }

  return {
    start: (spec) => launch(spec, 0),
    started: () => {
      startingUp = false;
    },
    pids: () => [...children.values()].map((c) => c.child.pid!).filter(Boolean),
    async stopAll(order) {
      stopping = true;
      for (const name of order) {
        const entry = children.get(name);
        if (!entry) continue;
        entry.child.kill("SIGTERM");
        await waitForExit(entry.child, 25_000);
      }
      for (const log of logs.values()) log.end();
    },
  };
}

/** The last `count` lines the child wrote (stdout and stderr), for the terminal when it fails. */
function tail(child: ChildProcess, count: number): () => string[] {
  const lines: string[] = [];
  let partial = "";
  const take = (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts.filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - count));
  };
  child.stdout?.on("data", take);
  child.stderr?.on("data", take);
  return () => (partial ? [...lines, partial] : [...lines]).slice(-count);
}

const indent = (lines: string[]) => lines.map((line) => `    ${line}`).join("\n");
