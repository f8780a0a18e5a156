import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import { join } from "node:path";
import { waitForExit } from "@bas/embedded-infra";

export interface ServiceSpec {
  name: string;
  /** Entry file, relative to the repository root. */
  entry: string;
  env: NodeJS.ProcessEnv;
}

export interface Supervisor {
  start(spec: ServiceSpec): void;
  /** SIGTERM to every child, in the order given, waiting for each to exit (SIGKILL after a grace period). */
  stopAll(order: string[]): Promise<void>;
  pids(): number[];
}

/**
 * Runs each service as its own Node process (TypeScript through tsx), logging to DATA_DIR/logs/<name>.log, and
 * restarts a service that dies unexpectedly, with backoff: a crash loses nothing (state is in NATS and Postgres).
 */
export function createSupervisor(options: { root: string; logDir: string; onEvent(msg: string): void }): Supervisor {
  const children = new Map<string, { child: ChildProcess; spec: ServiceSpec; restarts: number }>();
  const logs = new Map<string, WriteStream>();
  let stopping = false;

  function launch(spec: ServiceSpec, restarts: number) {
    let log = logs.get(spec.name);
    if (!log) {
      // Logs can hold what callers sent: their owner's alone, like the folder they are in.
      log = createWriteStream(join(options.logDir, `${spec.name}.log`), { flags: "a", mode: 0o600 });
      logs.set(spec.name, log);
    }
    // Detached (own process group): a Ctrl-C reaches only the launcher, which then stops the services in order.
    // The stdin pipe is the lifeline: when the launcher dies, however it dies, the service sees it close and exits.
    const child = spawn(process.execPath, ["--import", "tsx", spec.entry], {
      cwd: options.root,
      env: { ...spec.env, EXIT_WITH_PARENT: "1" },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    children.set(spec.name, { child, spec, restarts });
    const startedAt = Date.now();
    child.on("exit", (code, signal) => {
      if (stopping) return;
      // A service that ran for a while gets a fresh restart budget.
      const count = Date.now() - startedAt > 60_000 ? 0 : restarts + 1;
      const delay = Math.min(10_000, 250 * 2 ** count);
      options.onEvent(`${spec.name} exited (${signal ?? code}); restarting in ${delay} ms`);
      setTimeout(() => !stopping && launch(spec, count), delay);
    });
  }

  return {
    start: (spec) => launch(spec, 0),
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
