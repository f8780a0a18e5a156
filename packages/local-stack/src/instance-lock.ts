import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Another launcher runs on this DATA_DIR: a second one would take its NATS and Postgres for leftovers. */
export class AlreadyRunningError extends Error {
  override name = "AlreadyRunningError";
  constructor(
    readonly url: string,
    readonly pid: number,
  ) {
    super(`already running at ${url} (pid ${pid}) on this DATA_DIR: stop it first, or start with another DATA_DIR`);
  }
}

interface Holder {
  pid: number;
  url: string;
}

/**
 * Takes DATA_DIR for this launcher: `stack.lock` (created exclusively) names its pid and URL. A lock whose launcher
 * is gone (killed) is taken over.
 */
export function lockDataDir(dataDir: string, url: string): { release(): void } {
  const file = join(dataDir, "stack.lock");
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, url } satisfies Holder));
      closeSync(fd);
      return {
        release() {
          if (holderOf(file)?.pid === process.pid) rmSync(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw err;
      const holder = holderOf(file);
      if (holder && isLauncher(holder.pid)) throw new AlreadyRunningError(holder.url, holder.pid);
      rmSync(file, { force: true });
    }
  }
}

function holderOf(file: string): Holder | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Holder;
  } catch {
    return undefined;
  }
}

/** The pid runs a launcher still (not a process that got the pid after it). */
function isLauncher(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("local-stack");
  } catch {
    return false;
  }
}
