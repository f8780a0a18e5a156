import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";

export interface ScriptRunResult {
  ok: boolean;
  /** The last JSON line of stdout, parsed; else the whole stdout as text. */
  output: unknown;
  /** What went wrong (exit code, timeout, stderr tail), when not ok. */
  error?: string;
}

export interface ScriptRunnerOptions {
  chromiumPath: string;
  timeoutMs: number;
  maxOutputBytes?: number;
}

/** The node_modules folder puppeteer-core was loaded from, so a script in a temp folder can require it. */
function nodeModulesRoot(): string {
  const entry = require.resolve("puppeteer-core");
  const marker = `${sep}node_modules${sep}`;
  return entry.slice(0, entry.lastIndexOf(marker) + marker.length - 1);
}

function parseOutput(stdout: string): unknown {
  const lines = stdout.trim().split("\n").filter(Boolean);
  const last = lines.at(-1);
  if (last) {
    try {
      return JSON.parse(last);
    } catch {}
  }
  return stdout.trim();
}

/**
 * Runs a standalone Node.js script as a child process in an empty folder (with puppeteer-core resolvable), in its
 * own process group so a timeout also ends the Chromium it launched. The environment is minimal: nothing of the
 * runner's own configuration leaks into code the model may have written.
 */
export async function runScript(
  code: string,
  env: Record<string, string>,
  options: ScriptRunnerOptions,
): Promise<ScriptRunResult> {
  const dir = mkdtempSync(join(tmpdir(), "bas-code-"));
  const esm = /^\s*import\s[^(]/m.test(code);
  const file = join(dir, esm ? "script.mjs" : "script.cjs");
  writeFileSync(file, code);
  symlinkSync(nodeModulesRoot(), join(dir, "node_modules"), "dir");
  const limit = options.maxOutputBytes ?? 256 * 1024;
  try {
    return await new Promise<ScriptRunResult>((resolve) => {
      const child = spawn(process.execPath, [file], {
        cwd: dir,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: dir,
          XDG_CONFIG_HOME: join(dir, ".config"),
          XDG_CACHE_HOME: join(dir, ".cache"),
          CHROMIUM_PATH: options.chromiumPath,
          ...env,
        },
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => {
        if (stdout.length < limit) stdout += d.toString("utf8");
      });
      child.stderr.on("data", (d: Buffer) => {
        stderr = (stderr + d.toString("utf8")).slice(-4_000);
      });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {}
      }, options.timeoutMs);
      child.on("error", (err) => {
        clearTimeout(timer);
        resolve({ ok: false, output: null, error: `could not start node: ${err.message}` });
      });
      child.on("close", (code) => {
        clearTimeout(timer);
        // Whatever the script launched and left behind goes with it.
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {}
        if (timedOut)
          resolve({ ok: false, output: null, error: `the script did not finish within ${options.timeoutMs} ms` });
        else if (code !== 0)
          resolve({
            ok: false,
            output: null,
            error: `the script exited with code ${code}: ${stderr.trim().split("\n").slice(-5).join(" | ")}`,
          });
        else resolve({ ok: true, output: parseOutput(stdout) });
      });
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
