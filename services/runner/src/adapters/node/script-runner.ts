import { spawn } from "node:child_process";
import {
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, sep } from "node:path";

export interface ScriptRunResult {
  ok: boolean;
  /** The last JSON line of stdout, parsed; else the whole stdout as text. */
  output: unknown;
  /** What went wrong (exit code, timeout, stderr tail), when not ok. */
  error?: string;
}

export interface ScriptRunnerOptions {
  /** The task's own browser (its CDP URL): the only thing the script can reach. */
  browserWsEndpoint: string;
  timeoutMs: number;
  /** When the runner is root, the unprivileged user the script runs as. */
  uid?: number;
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
 * Runs a standalone Node.js script (code the model may have written: untrusted) in a bubblewrap sandbox: no network
 * but a bridge to the task's own browser, which is itself sandboxed behind the egress policy; a file system of only
 * the system's programs, Node.js, the project's node_modules (read-only) and the script's own folder; an unprivileged
 * user when the runner is root; an environment of its own. Its own process group, so a timeout ends it as a whole.
 */
export async function runScript(
  code: string,
  env: Record<string, string>,
  options: ScriptRunnerOptions,
): Promise<ScriptRunResult> {
  const dir = mkdtempSync(join(tmpdir(), "bas-code-"));
  const work = join(dir, "script");
  const sockets = join(dir, "sockets");
  mkdirSync(work, { mode: 0o700 });
  mkdirSync(sockets, { mode: 0o700 });
  if (options.uid !== undefined) chownSync(work, options.uid, options.uid);
  const esm = /^\s*import\s[^(]/m.test(code);
  const file = join(work, esm ? "script.mjs" : "script.cjs");
  writeFileSync(file, code, { mode: 0o644 });
  const modules = nodeModulesRoot();
  symlinkSync(modules, join(work, "node_modules"), "dir");
  const endpoint = new URL(options.browserWsEndpoint);
  const bridge = createServer((socket) => {
    const upstream = connect(Number(endpoint.port || 80), endpoint.hostname);
    socket.pipe(upstream).pipe(socket);
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve) => bridge.listen(join(sockets, "browser.sock"), resolve));
  const limit = options.maxOutputBytes ?? 256 * 1024;
  try {
    return await new Promise<ScriptRunResult>((resolve) => {
      const child = spawn("bwrap", sandboxArgs({ work, sockets, modules, uid: options.uid, file }), {
        cwd: work,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          PATH: "/usr/local/bin:/usr/bin:/bin",
          HOME: work,
          XDG_CONFIG_HOME: join(work, ".config"),
          XDG_CACHE_HOME: join(work, ".cache"),
          ...env,
          // The browser, as the sandbox reaches it: through the bridge on its own loopback.
          BROWSER_WS_ENDPOINT: `ws://127.0.0.1:9222${endpoint.pathname}${endpoint.search}`,
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
    bridge.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const INIT_SCRIPT = join(__dirname, "script-sandbox-init.sh");

function sandboxArgs(o: { work: string; sockets: string; modules: string; uid?: number; file: string }): string[] {
  const node = realpathSync(process.execPath);
  const outsideUsr = (path: string) => (path.startsWith("/usr/") ? [] : ["--ro-bind", path, path]);
  const parents = (path: string) => {
    const parts = dirname(path).split("/").filter(Boolean);
    return parts.map((_, i) => `/${parts.slice(0, i + 1).join("/")}`).filter((d) => d !== "/tmp");
  };
  return [
    ...(o.uid === undefined ? ["--unshare-user"] : []),
    "--unshare-net",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--ro-bind",
    "/usr",
    "/usr",
    ...["/bin", "/sbin", "/lib", "/lib32", "/lib64"].flatMap((dir) => {
      try {
        return lstatSync(dir).isSymbolicLink() ? ["--symlink", readlinkSync(dir), dir] : ["--ro-bind", dir, dir];
      } catch {
        return [];
      }
    }),
    "--ro-bind",
    "/etc",
    "/etc",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--perms",
    "1777",
    "--tmpfs",
    "/tmp",
    ...[...new Set([...parents(node), ...parents(o.modules), ...parents(o.work)])]
      .filter((d) => !d.startsWith("/usr"))
      .flatMap((d) => ["--perms", "0755", "--dir", d]),
    ...outsideUsr(dirname(node)),
    "--ro-bind",
    o.modules,
    o.modules,
    "--bind",
    o.work,
    o.work,
    "--bind",
    o.sockets,
    "/sockets",
    "--ro-bind",
    INIT_SCRIPT,
    "/sandbox-init.sh",
    "--chdir",
    o.work,
    "--",
    "/bin/sh",
    "/sandbox-init.sh",
    o.uid === undefined ? "" : String(o.uid),
    node,
    o.file,
  ];
}
