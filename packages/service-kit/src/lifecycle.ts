import { z } from "zod";
import { ConfigError, loadConfig } from "./config";
import { startTelemetry, type Telemetry } from "./telemetry";

export interface RunningService {
  /** Stop taking work, finish or hand back what is in flight, then close connections. Called once. */
  close(): Promise<void>;
}

/** Exit code of a service whose environment is wrong (sysexits' EX_CONFIG): starting it again cannot help. */
export const EXIT_CONFIG_ERROR = 78;

/**
 * The process skeleton of every service: telemetry first, then `start`; SIGTERM/SIGINT close it once and exit 0.
 * A bad environment exits EXIT_CONFIG_ERROR with a message naming the variable; another failure to start exits 1.
 */
export function runService(name: string, start: () => Promise<RunningService>): void {
  function fail(err: unknown): never {
    const message = err instanceof ConfigError ? err.message : `failed to start: ${(err as Error)?.stack ?? err}`;
    process.stderr.write(`${name}: ${message}\n`);
    process.exit(err instanceof ConfigError ? EXIT_CONFIG_ERROR : 1);
  }
  let telemetry: Telemetry;
  let exitWithParent: boolean;
  try {
    telemetry = startTelemetry(name);
    exitWithParent = loadConfig({ EXIT_WITH_PARENT: z.enum(["0", "1"]).default("0") }).EXIT_WITH_PARENT === "1";
  } catch (err) {
    fail(err);
  }
  let service: RunningService | undefined;
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    void (async () => {
      process.stderr.write(`${JSON.stringify({ service: name, msg: `received ${signal}, shutting down` })}\n`);
      const force = setTimeout(() => process.exit(1), 20_000);
      force.unref();
      await service?.close();
      await telemetry.shutdown();
      process.exit(0);
    })();
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
  // Under a local supervisor, stdin is a pipe from it: its end means the supervisor is gone, so go too.
  if (exitWithParent) {
    process.stdin.on("end", () => shutdown("supervisor gone"));
    process.stdin.on("error", () => shutdown("supervisor gone"));
    process.stdin.resume();
  }
  start().then((s) => {
    service = s;
  }, fail);
}
