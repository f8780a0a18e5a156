import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(__dirname, "../../..");

/** Where `npm start` wrote the addresses of what it runs: DATA_DIR (default `.data`), here or at the checkout's root. */
export function stackEnvFile(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string | undefined {
  const candidates = env.DATA_DIR
    ? [resolve(cwd, env.DATA_DIR, "stack.env")]
    : [resolve(cwd, ".data", "stack.env"), join(ROOT, ".data", "stack.env")];
  return candidates.find((file) => existsSync(file));
}

/**
 * The addresses the commands talk to: the environment's own, else the local stack's (`stack.env`). Nothing needs
 * sourcing first; a variable set by hand wins.
 */
export function loadStackEnv(env: NodeJS.ProcessEnv = process.env): { env: NodeJS.ProcessEnv; file?: string } {
  const file = stackEnvFile(env);
  if (!file) return { env };
  const fromFile = Object.fromEntries(
    readFileSync(file, "utf8")
      .split("\n")
      .map((line) => line.match(/^([A-Z_][A-Z0-9_]*)=(.*)$/))
      .filter((m): m is RegExpMatchArray => m !== null)
      .map((m) => [m[1], m[2]]),
  );
  return { env: { ...fromFile, ...env }, file };
}
