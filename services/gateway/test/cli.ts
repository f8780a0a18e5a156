import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = join(__dirname, "../../..");

/** Runs the gateway CLI as a user would (`npm run cli -- ...` runs this same file with tsx). */
export async function cli(
  databaseUrl: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      join(ROOT, "node_modules/.bin/tsx"),
      [join(ROOT, "services/gateway/src/cli/main.ts"), ...args],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl }, timeout: 60_000 },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}
