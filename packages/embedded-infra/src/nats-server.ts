import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { findNatsServer } from "./binaries";
import { freePort } from "./free-port";
import { waitForExit, waitForLine } from "./process";
import { exitOf, type ServerProcess } from "./server-process";

export interface EmbeddedNats extends ServerProcess {
  url: string;
}

/** Starts a `nats-server` with JetStream on loopback, storing under `dataDir`. */
export async function startNatsServer(options: {
  dataDir: string;
  port?: number;
  /** Its own process group, so that a terminal's Ctrl-C does not stop NATS before the services that still need it. */
  detached?: boolean;
  /** Where its log goes (it is read, then dropped, when not given). */
  log?: NodeJS.WritableStream;
}): Promise<EmbeddedNats> {
  // The store is the server's alone (its messages hold the deployment's events).
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  chmodSync(options.dataDir, 0o700);
  const pidFile = join(options.dataDir, "nats-server.pid");
  await stopLeftover(pidFile);
  const port = options.port ?? (await freePort());
  const args = ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", options.dataDir, "-P", pidFile];
  const child = spawn(findNatsServer(), args, {
    stdio: ["ignore", "ignore", "pipe"],
    detached: options.detached ?? false,
  });
  if (options.log) child.stderr?.pipe(options.log, { end: false });
  const exited = exitOf(child);
  await waitForLine(child, /Server is ready/, 15_000, "nats-server");
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: child.pid!,
    exited,
    async stop() {
      child.kill("SIGTERM");
      await waitForExit(child, 10_000);
    },
  };
}

/** A server left running by a launcher that was killed would hold the store: stop it first. */
async function stopLeftover(pidFile: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  if (!pid || !isNatsServer(pid)) return;
  process.kill(pid, "SIGTERM");
  for (let i = 0; i < 100 && isNatsServer(pid); i++) await new Promise((r) => setTimeout(r, 50));
}

function isNatsServer(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("nats-server");
  } catch {
    return false;
  }
}
