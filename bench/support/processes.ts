import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

const ROOT = join(__dirname, "..", "..");

/**
 * A service as its own process, as deployed (the benchmark client never shares an event loop with what it measures);
 * its stderr is relayed with the name in front.
 */
export function startServiceProcess(name: string, main: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, main)], {
    cwd: ROOT,
    env: { ...process.env, ...env, OTEL_SDK_DISABLED: "true" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr?.on("data", (d) => process.stderr.write(`[${name}] ${d}`));
  return child;
}

/** Polls `ready` until it answers true; throws after `timeoutMs`. */
export async function waitUntil(what: string, ready: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
