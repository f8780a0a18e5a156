import { type ChildProcess, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { runEnv } from "./run-env";

const ROOT = join(__dirname, "../../..");

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr (its JSON log lines). */
  output(): string;
  /** Ends it (SIGKILL unless told otherwise: a crash) and waits until it is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts a service's `main.ts` as its own process, as the local stack does, for tests that crash it (or its compiled
 * `main.js`, as the images run it); resolves once it logged `readyMessage`. It carries the run's environment
 * (runEnv), so the janitor ends it should the test not.
 */
export async function spawnServiceProcess(options: {
  /** Relative to the repository root (or absolute), e.g. `services/sessions/src/main.ts` or `dist/sessions/main.js`. */
  entry: string;
  readyMessage: string;
  env: Record<string, string>;
}): Promise<ServiceProcess> {
  // `node --import tsx` keeps it one process: the tsx CLI would run the service in a child we could not SIGKILL.
  const loader = options.entry.endsWith(".js") ? ["--enable-source-maps"] : ["--import", "tsx"];
  const child = spawn(process.execPath, [...loader, resolve(ROOT, options.entry)], {
    cwd: ROOT,
    // Tracing is off unless the test turns it on; the ready message is an info line.
    env: { ...runEnv(), OTEL_SDK_DISABLED: "true", ...options.env, LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const append = (d: Buffer) => {
    output += d.toString("utf8");
  };
  child.stdout!.on("data", append);
  child.stderr!.on("data", append);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${options.entry} did not start:\n${output}`)), 30_000);
    const check = () => {
      if (output.includes(`"msg":"${options.readyMessage}"`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${options.entry} exited with ${code}:\n${output}`));
    });
  });
  return {
    child,
    output: () => output,
    async kill(signal = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
