import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, readdir, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { BrowserHandle } from "../../domain/browser-events";
import type { BrowserDriver, LaunchSpec, RunningBrowser } from "../../domain/browser-driver";
import { probeDevtools } from "../cdp/devtools-probe";
import { chromiumArgs } from "./chromium-args";
import { commandLineOf, findProcessesByArgPrefix, groupMemory, processGroupOf, signalGroup } from "./proc-fs";

export interface LocalDriverOptions {
  chromiumPath: string;
  /** This node's folder of browser profiles: each browser gets `<root>/<browserId>`, which also marks its processes. */
  root: string;
  noSandbox: boolean;
  launchTimeoutMs?: number;
  /** How often an adopted browser (not our child, so no exit event) is checked for life. */
  pollMs?: number;
  extraArgs?: readonly string[];
}

type LocalHandle = Extract<BrowserHandle, { driver: "local" }>;

const DEVTOOLS_LINE = /DevTools listening on (ws:\/\/\S+)/;

/** Chromium as child processes of this node, each in a process group of its own so it can be ended as a whole. */
export function createLocalDriver(options: LocalDriverOptions): BrowserDriver {
  const launchTimeoutMs = options.launchTimeoutMs ?? 20_000;
  const pollMs = options.pollMs ?? 1_000;
  const dirArg = (dir: string) => `--user-data-dir=${dir}`;

  async function launch(spec: LaunchSpec): Promise<RunningBrowser> {
    const userDataDir = join(options.root, spec.browserId);
    await rm(userDataDir, { recursive: true, force: true });
    await mkdir(userDataDir, { recursive: true });
    const args = chromiumArgs({
      userDataDir,
      screenWidth: spec.screenWidth,
      screenHeight: spec.screenHeight,
      proxyServer: spec.proxyPort === null ? null : `http://127.0.0.1:${spec.proxyPort}`,
      noSandbox: options.noSandbox,
      extraArgs: options.extraArgs,
    });
    // detached: a new session and process group, so one signal reaches every Chromium process and the browser
    // outlives this service if it dies (a restart adopts it again).
    const child = spawn(options.chromiumPath, args, {
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
      env: {
        ...process.env,
        XDG_CONFIG_HOME: join(userDataDir, ".config"),
        XDG_CACHE_HOME: join(userDataDir, ".cache"),
      },
    });
    try {
      const devtoolsUrl = await waitForDevtools(child, launchTimeoutMs);
      if (new URL(devtoolsUrl).hostname !== "127.0.0.1") throw new Error(`DevTools not on loopback: ${devtoolsUrl}`);
      await probeDevtools(devtoolsUrl, launchTimeoutMs);
      const handle: LocalHandle = {
        driver: "local",
        devtoolsUrl,
        pid: child.pid!,
        userDataDir,
        proxyPort: spec.proxyPort,
      };
      return localBrowser(spec.browserId, handle, child);
    } catch (err) {
      if (child.pid) signalGroup(child.pid, "SIGKILL");
      await rm(userDataDir, { recursive: true, force: true }).catch(() => undefined);
      throw err;
    }
  }

  function localBrowser(id: string, handle: LocalHandle, child?: ChildProcess): RunningBrowser {
    let killed = false;
    let exitDetail: string | undefined;
    let poll: NodeJS.Timeout | undefined;
    const listeners: Array<(detail: string) => void> = [];
    const exit = (detail: string) => {
      if (killed || exitDetail !== undefined) return;
      exitDetail = detail;
      clearInterval(poll);
      for (const listener of listeners) listener(detail);
    };
    let childExit: Promise<void> | undefined;
    if (child) {
      childExit = new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        child.once("exit", (code, signal) => {
          resolve();
          exit(`Chromium exited (${signal ?? `code ${code}`})`);
        });
      });
    } else {
      poll = setInterval(() => {
        void processGroupOf(handle.pid).then((group) => group === undefined && exit("Chromium process is gone"));
      }, pollMs);
      poll.unref();
    }
    return {
      id,
      handle,
      onExit(listener) {
        // A browser that died before anyone listened still reports it.
        if (exitDetail !== undefined) queueMicrotask(() => listener(exitDetail!));
        else listeners.push(listener);
      },
      memory: () => groupMemory(handle.pid),
      async kill() {
        if (killed) return;
        killed = true;
        clearInterval(poll);
        signalGroup(handle.pid, "SIGKILL");
        if (childExit) await childExit;
        else await waitUntilGone(handle.pid);
        await rm(handle.userDataDir, { recursive: true, force: true }).catch(() => undefined);
      },
    };
  }

  async function adopt(id: string, handle: BrowserHandle): Promise<RunningBrowser | undefined> {
    if (handle.driver !== "local") return undefined;
    const ours = (await commandLineOf(handle.pid))?.includes(dirArg(handle.userDataDir)) ?? false;
    const alive = ours && (await processGroupOf(handle.pid)) === handle.pid;
    if (alive) {
      try {
        await probeDevtools(handle.devtoolsUrl, 5_000);
        return localBrowser(id, handle);
      } catch {
        // Alive but deaf: end it below.
      }
    }
    await endLeftovers(handle.userDataDir);
    return undefined;
  }

  /** Ends whatever still runs with this profile (a half-dead browser, renderers whose parent died). */
  async function endLeftovers(userDataDir: string): Promise<void> {
    for (const { pid } of await findProcessesByArgPrefix(dirArg(userDataDir))) {
      const group = await processGroupOf(pid);
      if (group !== undefined) signalGroup(group, "SIGKILL");
      else process.kill(pid, "SIGKILL");
    }
    await rm(userDataDir, { recursive: true, force: true }).catch(() => undefined);
  }

  async function reapOrphans(keep: ReadonlySet<string>): Promise<string[]> {
    const reaped = new Set<string>();
    for (const { pid, arg } of await findProcessesByArgPrefix(dirArg(`${options.root}/`))) {
      const id = basename(arg.slice("--user-data-dir=".length));
      if (keep.has(id)) continue;
      const group = await processGroupOf(pid);
      if (group !== undefined) signalGroup(group, "SIGKILL");
      reaped.add(id);
    }
    const dirs = await readdir(options.root).catch(() => [] as string[]);
    for (const id of dirs) {
      if (keep.has(id)) continue;
      await rm(join(options.root, id), { recursive: true, force: true }).catch(() => undefined);
    }
    return [...reaped];
  }

  return { name: "local", launch, adopt, reapOrphans, close: async () => undefined };
}

function waitForDevtools(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(
      () => fail(new Error(`Chromium printed no DevTools URL within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8_192);
      const match = output.match(DEVTOOLS_LINE);
      if (match) {
        cleanup();
        resolve(match[1]);
      }
    };
    const onExit = (code: number | null, signal: string | null) =>
      fail(new Error(`Chromium exited (${signal ?? `code ${code}`}) before DevTools was up: ${output.slice(-1_000)}`));
    const onError = (err: Error) => fail(err);
    function fail(err: Error) {
      cleanup();
      reject(err);
    }
    function cleanup() {
      clearTimeout(timer);
      child.stderr?.off("data", onData);
      child.off("exit", onExit);
      child.off("error", onError);
      // Keep draining Chromium's log so it never blocks on a full pipe; its content is not needed.
      child.stderr?.resume();
    }
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
    child.once("error", onError);
  });
}

async function waitUntilGone(pid: number, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await processGroupOf(pid)) !== undefined && Date.now() < deadline) await sleep(20);
}
