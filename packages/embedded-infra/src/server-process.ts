import type { ChildProcess } from "node:child_process";

/** A server process this package started (nats-server, a Postgres postmaster). */
export interface ServerProcess {
  pid: number;
  /** Resolves when the process has ended, however it ended: `"code 1"`, `"SIGKILL"`. */
  exited: Promise<string>;
  /** Asks the server to shut down cleanly and waits until it has (killing it if it takes too long). */
  stop(): Promise<void>;
}

/** How a child ended, once it has (or that it never started: the program could not be run). */
export function exitOf(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => {
    const describe = () => child.signalCode ?? `code ${child.exitCode}`;
    if (child.exitCode !== null || child.signalCode !== null) return resolve(describe());
    child.once("exit", () => resolve(describe()));
    child.once("error", (err) => resolve(`not started: ${err.message}`));
  });
}
