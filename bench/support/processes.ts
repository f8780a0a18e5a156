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
  // A benchmark that dies of an error still ends its services (browser-pool stops its browsers on SIGTERM): left
  // running, their idle browsers share pages with the next run's and lower every PSS it measures.
  const end = () => child.kill("SIGTERM");
  process.once("exit", end);
  child.once("exit", () => process.off("exit", end));
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
