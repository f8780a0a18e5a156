import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { runEnv } from "@bas/testing";

const ROOT = join(__dirname, "../../../..");

export interface RunnerProcess {
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr (its JSON log lines). */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `services/runner/src/main.ts` as its own process, as the local stack does; resolves once it serves. */
export async function spawnRunner(env: Record<string, string>): Promise<RunnerProcess> {
  // `node --import tsx` keeps it one process: the tsx CLI would run the service in a child it cannot SIGKILL for us.
  const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "services/runner/src/main.ts")], {
    cwd: ROOT,
    env: { ...runEnv(), ...env, LOG_LEVEL: "info", OTEL_SDK_DISABLED: "true" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.stdout!.on("data", (d: Buffer) => {
    output += d.toString("utf8");
  });
  child.stderr!.on("data", (d: Buffer) => {
    output += d.toString("utf8");
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`runner process did not start:\n${output}`)), 30_000);
    const check = () => {
      if (output.includes('"msg":"runner started"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`runner process exited with ${code}:\n${output}`));
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
