import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { findNatsServer } from "./binaries";
import { freePort } from "./free-port";
import { waitForExit, waitForLine } from "./process";

export interface EmbeddedNats {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts a `nats-server` with JetStream on loopback, storing under `dataDir`. */
export async function startNatsServer(options: {
  dataDir: string;
  port?: number;
  /** Its own process group, so that a terminal's Ctrl-C does not stop NATS before the services that still need it. */
  detached?: boolean;
}): Promise<EmbeddedNats> {
  mkdirSync(options.dataDir, { recursive: true });
  const pidFile = join(options.dataDir, "nats-server.pid");
  await stopLeftover(pidFile);
  const port = options.port ?? (await freePort());
  const args = ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", options.dataDir, "-P", pidFile];
  const child = spawn(findNatsServer(), args, {
    stdio: ["ignore", "ignore", "pipe"],
    detached: options.detached ?? false,
  });
  await waitForLine(child, /Server is ready/, 15_000, "nats-server");
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: child.pid!,
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
