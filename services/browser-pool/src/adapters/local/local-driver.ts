import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chown, mkdir, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { BrowserHandle } from "../../domain/events";
import type { BrowserDriver, EgressAddress, LaunchSpec, RunningBrowser } from "../../domain/browser-driver";
import { fetchDevtoolsJson } from "../cdp/devtools-json";
import { type FileUrlGuard, guardFileUrls } from "../cdp/file-url-guard";
import type { NumberPool } from "../../domain/number-pool";
import { chromiumArgs } from "./chromium-args";
import { type ChromiumConfig, writeChromiumConfig } from "./chromium-policy";
import { commandLineOf, findProcessesByArgPrefix, processGroupOf, signalGroup, treeMemory } from "./proc-fs";
import {
  checkSandboxTools,
  SANDBOX_DEVTOOLS_PORT,
  SANDBOX_PROXY_PORT,
  sandboxCommand,
  sandboxSockets,
} from "./sandbox";
import { sandboxRelay } from "./sandbox-relay";

export interface LocalDriverOptions {
  chromiumPath: string;
  /**
   * Chromium's headless shell (`isHeadlessShell`): it reads no policies, so every browser's file:// is refused by a
   * guard of ours over CDP, and a client's new page opens at the launch size whatever a window was resized to, so
   * warm browsers are not resized (`resizesWindows`).
   */
  headlessShell?: boolean;
  /** This node's folder of browser profiles: each browser gets `<root>/<browserId>`, which also marks its processes. */
  root: string;
  /** Unprivileged users for Chromium; undefined when browser-pool is not root (a user namespace stands in). */
  users: NumberPool | undefined;
  noSandbox: boolean;
  /** See `ChromiumArgsOptions.isolatedServices` (default true). */
  isolatedServices?: boolean;
  /** See `ChromiumArgsOptions.gpuSandbox` (default false). */
  gpuSandbox?: boolean;
  /** As root, callers' CDP goes through a relay in each sandbox's network (`sandboxRelay`), not the proxy (default true). */
  cdpRelay?: boolean;
  launchTimeoutMs?: number;
  /** How often an adopted browser (not our child, so no exit event) is checked for life. */
  pollMs?: number;
  extraArgs?: readonly string[];
  /** LANG and TZ for Chromium (default C.UTF-8, the system's zone). */
  locale?: { LANG: string; TZ?: string };
}

type LocalHandle = Extract<BrowserHandle, { driver: "local" }>;

const DEVTOOLS_LINE = /DevTools listening on (ws:\/\/\S+)/;
/** Folders under the root that are not profiles: sockets per browser, and the Chromium policies. */
const SOCKETS = ".sockets";
/** A Unix socket's path has at most 107 bytes (sun_path); a longer one cannot be bound or connected to. */
const MAX_SOCKET_PATH = 107;

/** A browser's socket folder: short and fixed in length, whatever the browser's id. */
const socketDirName = (browserId: string) => createHash("sha256").update(browserId).digest("hex").slice(0, 16);

/**
 * Where the browsers' socket folders go: in the root when the paths fit, else (a deep DATA_DIR) in a folder of the
 * temp dir named after the root, so that a restarted browser-pool finds the same sockets again.
 */
export function socketRootFor(root: string): string {
  const inRoot = join(root, SOCKETS);
  const longest = sandboxSockets(join(inRoot, socketDirName(""))).devtools;
  if (Buffer.byteLength(longest) <= MAX_SOCKET_PATH) return inRoot;
  return join(tmpdir(), `bas-sockets-${createHash("sha256").update(root).digest("hex").slice(0, 12)}`);
}

/** The sockets of one browser of a driver started on `root` (benchmarks reach DevTools straight through them). */
export const browserSocketsOf = (root: string, browserId: string) =>
  sandboxSockets(join(socketRootFor(root), socketDirName(browserId)));

/**
 * Chromium as child processes of this node, each in a sandbox of its own (see sandbox.ts) that is also a process
 * group of its own, so it can be ended as a whole.
 */
export function createLocalDriver(options: LocalDriverOptions): BrowserDriver {
  const launchTimeoutMs = options.launchTimeoutMs ?? 20_000;
  const pollMs = options.pollMs ?? 1_000;
  const dirArg = (dir: string) => `--user-data-dir=${dir}`;
  /**
   * Resolves once no process runs with the profile folder `userDataDir` (or after `timeoutMs`): a sandbox's last
   * processes end a moment after its first, as the kernel tears its PID namespace down.
   */
  async function untilNoneRuns(userDataDir: string, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await findProcessesByArgPrefix(dirArg(userDataDir))).length > 0 && Date.now() < deadline) await sleep(20);
  }
  const socketRoot = socketRootFor(options.root);
  const socketsDirOf = (id: string) => join(socketRoot, socketDirName(id));
  let chromiumConfig: Promise<ChromiumConfig> | undefined;

  async function egressAddress(id: string, handle?: BrowserHandle): Promise<EgressAddress> {
    const socketsDir = socketsDirOf(id);
    if (!handle) await rm(socketsDir, { recursive: true, force: true });
    // Only browser-pool's user may open the sockets: the browser's user reaches them through the bridges alone.
    await mkdir(socketsDir, { recursive: true, mode: 0o700 });
    return { path: sandboxSockets(socketsDir).egress };
  }

  async function launch(spec: LaunchSpec): Promise<RunningBrowser> {
    checkSandboxTools(options.chromiumPath);
    chromiumConfig ??= writeChromiumConfig(options.root);
    const config = await chromiumConfig;
    const userDataDir = join(options.root, spec.browserId);
    const socketsDir = socketsDirOf(spec.browserId);
    await rm(userDataDir, { recursive: true, force: true });
    await mkdir(userDataDir, { recursive: true, mode: 0o700 });
    const uid = options.users?.take();
    if (uid !== undefined) await chown(userDataDir, uid, uid);
    await spec.prepareProfile?.(userDataDir, uid);
    const { command, args } = sandboxCommand({
      profileDir: userDataDir,
      socketsDir,
      ...config,
      uid,
      chromiumPath: options.chromiumPath,
      chromiumArgs: chromiumArgs({
        userDataDir,
        screenWidth: spec.screenWidth,
        screenHeight: spec.screenHeight,
        devtoolsPort: SANDBOX_DEVTOOLS_PORT,
        proxyPort: SANDBOX_PROXY_PORT,
        noSandbox: options.noSandbox,
        isolatedServices: options.isolatedServices ?? true,
        gpuSandbox: options.gpuSandbox,
        ignoreCertificateErrors: spec.ignoreCertificateErrors,
        extraArgs: options.extraArgs,
      }),
    });
    // detached: a new session and process group, so one signal reaches every process of the sandbox and the browser
    // outlives this service if it dies (a restart adopts it again). Nothing of this service's environment (its
    // database URL, keys) is handed to the browser.
    const child = spawn(command, args, {
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
      env: browserEnv(userDataDir, options.locale ?? { LANG: "C.UTF-8" }),
    });
    let guard: FileUrlGuard | undefined;
    try {
      const devtoolsUrl = await waitForDevtools(child, launchTimeoutMs);
      const devtoolsSocket = sandboxSockets(socketsDir).devtools;
      await waitForBridge(devtoolsUrl, devtoolsSocket, launchTimeoutMs);
      const handle: LocalHandle = {
        driver: "local",
        devtoolsUrl,
        devtoolsSocket,
        pid: child.pid!,
        userDataDir,
        uid,
        proxyPort: null,
      };
      // Before anyone else can reach the browser: its launch is not over until file:// is closed.
      guard = await guardIfShell(handle);
      return localBrowser(spec.browserId, handle, child, guard);
    } catch (err) {
      guard?.close();
      if (child.pid) signalGroup(child.pid, "SIGKILL");
      if (uid !== undefined) options.users?.release(uid);
      await removeDirs(spec.browserId);
      throw err;
    }
  }

  /**
   * The headless shell's file:// guard (`guardFileUrls`). A browser whose guard's connection breaks is ended rather
   * than left open, and its exit is reported as any other; one that ended by itself (which breaks it too) is left be,
   * its process group's number perhaps another's by then.
   */
  const guardIfShell = (handle: Pick<LocalHandle, "devtoolsUrl" | "devtoolsSocket" | "pid" | "userDataDir">) =>
    options.headlessShell
      ? guardFileUrls(handle.devtoolsUrl, handle.devtoolsSocket, async () => {
          const ours = (await commandLineOf(handle.pid))?.includes(dirArg(handle.userDataDir));
          if (ours) signalGroup(handle.pid, "SIGKILL");
        })
      : Promise.resolve(undefined);

  const removeDirs = (id: string) =>
    Promise.all([
      rm(join(options.root, id), { recursive: true, force: true }),
      rm(socketsDirOf(id), { recursive: true, force: true }),
    ]).catch(() => undefined);

  function localBrowser(id: string, handle: LocalHandle, child?: ChildProcess, guard?: FileUrlGuard): RunningBrowser {
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
    const cdpRelay = options.cdpRelay === false ? undefined : sandboxRelay(handle.pid, handle.uid);
    return {
      id,
      handle,
      cdpRelay,
      onExit(listener) {
        // A browser that died before anyone listened still reports it.
        if (exitDetail !== undefined) queueMicrotask(() => listener(exitDetail!));
        else listeners.push(listener);
      },
      memory: () => treeMemory(handle.pid),
      async kill() {
        if (killed) return;
        killed = true;
        clearInterval(poll);
        guard?.close();
        cdpRelay?.close();
        signalGroup(handle.pid, "SIGKILL");
        if (childExit) await childExit;
        else await waitUntilGone(handle.pid);
        await untilNoneRuns(handle.userDataDir);
        if (handle.uid !== undefined) options.users?.release(handle.uid);
        await removeDirs(id);
      },
    };
  }

  async function adopt(id: string, handle: BrowserHandle): Promise<RunningBrowser | undefined> {
    if (handle.driver !== "local") return undefined;
    const ours = (await commandLineOf(handle.pid))?.includes(dirArg(handle.userDataDir)) ?? false;
    const alive = ours && (await processGroupOf(handle.pid)) === handle.pid && handle.devtoolsSocket !== undefined;
    if (alive) {
      try {
        await fetchDevtoolsJson(devtoolsAddress(handle.devtoolsUrl, handle.devtoolsSocket), "/json/version");
        const guard = await guardIfShell(handle);
        if (handle.uid !== undefined) options.users?.hold(handle.uid);
        return localBrowser(id, handle, undefined, guard);
      } catch {
        // Alive but deaf: end it below.
      }
    }
    await endLeftovers(id, handle.userDataDir);
    return undefined;
  }

  /** Ends whatever still runs with this profile (a half-dead browser, renderers whose parent died). */
  async function endLeftovers(id: string, userDataDir: string): Promise<void> {
    for (const { pid } of await findProcessesByArgPrefix(dirArg(userDataDir))) {
      const group = await processGroupOf(pid);
      if (group !== undefined) signalGroup(group, "SIGKILL");
      else process.kill(pid, "SIGKILL");
    }
    await untilNoneRuns(userDataDir);
    await removeDirs(id);
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
    await Promise.all([...reaped].map((id) => untilNoneRuns(join(options.root, id))));
    for (const id of await readdir(options.root).catch(() => [] as string[])) {
      if (!id.startsWith(".") && !keep.has(id)) await removeDirs(id);
    }
    const keptSockets = new Set([...keep].map(socketDirName));
    for (const name of await readdir(socketRoot).catch(() => [] as string[])) {
      if (!keptSockets.has(name)) await rm(join(socketRoot, name), { recursive: true, force: true });
    }
    return [...reaped];
  }

  return {
    name: "local",
    resizesWindows: !options.headlessShell,
    egressAddress,
    launch,
    adopt,
    reapOrphans,
    close: async () => undefined,
  };
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

/** The bridge to DevTools answers once Chromium listens inside the sandbox; until then a request finds no one. */
async function waitForBridge(devtoolsUrl: string, socketPath: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fetchDevtoolsJson(devtoolsAddress(devtoolsUrl, socketPath), "/json/version", 2_000);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`DevTools did not answer through ${socketPath}`, { cause: err });
      await sleep(20);
    }
  }
}

function devtoolsAddress(devtoolsUrl: string, socketPath: string) {
  const url = new URL(devtoolsUrl);
  return { host: url.hostname, port: Number(url.port), socketPath };
}

/** What Chromium gets for an environment: a home in its profile and nothing of this service's own. */
function browserEnv(userDataDir: string, locale: { LANG: string; TZ?: string }): NodeJS.ProcessEnv {
  return {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: userDataDir,
    XDG_CONFIG_HOME: join(userDataDir, ".config"),
    XDG_CACHE_HOME: join(userDataDir, ".cache"),
    TMPDIR: "/tmp",
    ...locale,
  };
}

async function waitUntilGone(pid: number, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await processGroupOf(pid)) !== undefined && Date.now() < deadline) await sleep(20);
}
