import { chmod, chown, mkdir, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Dockerode from "dockerode";
import type { BrowserDriver, EgressAddress, LaunchSpec, RunningBrowser } from "../../domain/browser-driver";
import type { BrowserHandle } from "../../domain/events";
import { browserExit } from "../browser-exit";
import { browserImageArgs } from "../browser-image-args";
import { devtoolsUpstream, fetchDevtoolsJson } from "../cdp/devtools-json";
import { browserSocketsOf, socketRootFor } from "../local/local-driver";
import { containerSpec, LABELS, nodeFilters } from "./container-spec";

type ContainerHandle = Extract<BrowserHandle, { driver: "container" }>;

export interface ContainerDriverOptions {
  /** The Unix socket of the engine's API: Docker's, or Podman's compatible one (`podman system service`). */
  engineSocket: string;
  image: string;
  /** This node's folder of browser profiles and sockets, as for the local driver. */
  root: string;
  nodeId: string;
  /** The deployment's NAMESPACE setting, so two deployments on one engine never reap each other's browsers. */
  deployment: string;
  limits: { memoryBytes: number; pids: number; cpus: number };
  /** LANG and TZ for Chromium. */
  locale?: { LANG: string; TZ?: string };
  launchTimeoutMs?: number;
}

/** The image's user (the Dockerfile's chromium target): it owns each browser's profile and socket folder. */
const BROWSER_USER = 1000;
const runsAsRoot = process.getuid?.() === 0;
/** Where Chromium's DevTools listens on the container's loopback (chromium-pod.sh's CHROMIUM_DEVTOOLS_PORT). */
const CHROMIUM_DEVTOOLS_PORT = 9221;

/**
 * One container of the browser image (`bas/chromium`) per browser, through the Docker Engine API that Docker and
 * Podman both serve. The container has no network but its own loopback: its only ways in and out are the two Unix
 * sockets of the local driver's sandbox (DevTools, and the egress proxy), in a folder of this host's bound in, so its
 * egress goes through our proxy and its policy exactly as a local browser's does (container-spec.ts).
 */
export async function createContainerDriver(options: ContainerDriverOptions): Promise<BrowserDriver> {
  const docker = new Dockerode({ socketPath: options.engineSocket });
  await checkEngine(docker, options);
  // This node's folder is browser-pool's user's alone: the containers' user (1000) may be a user of this host too,
  // and the engine binds each browser's folders in without that user having to reach them.
  for (const dir of [options.root, socketRootFor(options.root)]) {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
  }
  const launchTimeoutMs = options.launchTimeoutMs ?? 30_000;
  const socketsDirOf = (id: string) => dirname(browserSocketsOf(options.root, id).egress);
  /** Each adopted or launched browser's wait on its container, ended at close. */
  const waits = new AbortController();

  /** Folders the container's user writes to, inside this node's folders that only browser-pool's user can open. */
  async function browserFolder(path: string) {
    await mkdir(path, { recursive: true, mode: 0o700 });
    if (runsAsRoot) await chown(path, BROWSER_USER, BROWSER_USER);
    // Not root: the container's user is another user of this host (or a subordinate one of a rootless engine).
    else await chmod(path, 0o777);
  }

  async function egressAddress(id: string, handle?: BrowserHandle): Promise<EgressAddress> {
    const socketsDir = socketsDirOf(id);
    if (!handle) await rm(socketsDir, { recursive: true, force: true });
    await browserFolder(socketsDir);
    return { path: browserSocketsOf(options.root, id).egress };
  }

  async function launch(spec: LaunchSpec): Promise<RunningBrowser> {
    if (!("path" in spec.egress)) throw new Error("a browser container reaches its egress proxy on a Unix socket");
    const userDataDir = join(options.root, spec.browserId);
    const sockets = browserSocketsOf(options.root, spec.browserId);
    await rm(userDataDir, { recursive: true, force: true });
    await browserFolder(userDataDir);
    const created = await docker.createContainer(
      containerSpec({
        browserId: spec.browserId,
        nodeId: options.nodeId,
        deployment: options.deployment,
        image: options.image,
        socketsDir: dirname(sockets.egress),
        userDataDir,
        user: BROWSER_USER,
        limits: options.limits,
        locale: options.locale ?? { LANG: "C.UTF-8" },
        args: browserImageArgs({
          screenWidth: spec.screenWidth,
          screenHeight: spec.screenHeight,
          proxyServer: "http://127.0.0.1:3128",
          ignoreCertificateErrors: spec.ignoreCertificateErrors,
        }),
      }),
    );
    try {
      await created.start();
      const devtoolsUrl = await waitForDevtools(created, sockets.devtools, launchTimeoutMs);
      return containerBrowser(spec.browserId, {
        driver: "container",
        devtoolsUrl,
        devtoolsSocket: sockets.devtools,
        containerId: created.id,
        userDataDir,
        proxyPort: null,
      });
    } catch (err) {
      await created.remove({ force: true }).catch(() => undefined);
      await removeDirs(spec.browserId);
      throw err;
    }
  }

  const removeDirs = (id: string) =>
    Promise.all([
      rm(join(options.root, id), { recursive: true, force: true }),
      rm(socketsDirOf(id), { recursive: true, force: true }),
    ]).catch(() => undefined);

  function containerBrowser(id: string, handle: ContainerHandle): RunningBrowser {
    const container = docker.getContainer(handle.containerId);
    const exit = browserExit();
    container.wait({ abortSignal: waits.signal }).then(
      (result: { StatusCode?: number }) => exit.exit(`container exited (code ${result.StatusCode ?? "?"})`),
      (err: Error) => {
        if (!waits.signal.aborted) exit.exit(`container is gone (${err.message})`);
      },
    );
    return {
      id,
      handle,
      onExit: exit.onExit,
      // The engine's figure is the container's cgroup, not the processes' own: not what BrowserMemory says.
      memory: async () => undefined,
      async kill() {
        if (!exit.kill()) return;
        await container.remove({ force: true }).catch(ignoreMissing);
        await removeDirs(id);
      },
    };
  }

  async function adopt(id: string, handle: BrowserHandle): Promise<RunningBrowser | undefined> {
    if (handle.driver !== "container") return undefined;
    const container = docker.getContainer(handle.containerId);
    const state = await container.inspect().then((info) => info.State, ignoreMissing);
    if (state?.Running) {
      try {
        await fetchDevtoolsJson(devtoolsUpstream(handle.devtoolsUrl, handle.devtoolsSocket), "/json/version");
        return containerBrowser(id, handle);
      } catch {
        // Running but deaf: end it below.
      }
    }
    if (state) await container.remove({ force: true }).catch(ignoreMissing);
    await removeDirs(id);
    return undefined;
  }

  async function reapOrphans(keep: ReadonlySet<string>): Promise<string[]> {
    const reaped: string[] = [];
    const mine = await docker.listContainers({
      all: true,
      filters: { label: nodeFilters(options.nodeId, options.deployment) },
    });
    for (const info of mine) {
      const id = info.Labels[LABELS.browserId];
      if (id && keep.has(id)) continue;
      await docker.getContainer(info.Id).remove({ force: true }).catch(ignoreMissing);
      if (id) await removeDirs(id);
      reaped.push(id ?? info.Id);
    }
    return reaped;
  }

  return {
    name: "container",
    resizesWindows: true,
    egressAddress,
    launch,
    adopt,
    reapOrphans,
    async close() {
      waits.abort();
    },
  };
}

/** Fails at start, saying what to do, when the engine does not answer or the browser image is not there. */
async function checkEngine(docker: Dockerode, options: ContainerDriverOptions): Promise<void> {
  try {
    await docker.ping();
  } catch (err) {
    throw new Error(
      `the container engine's API does not answer at ${options.engineSocket} (${(err as Error).message}): start ` +
        "Docker, or Podman's API (podman system service --time=0 unix://<socket>), or set CONTAINER_ENGINE_SOCKET",
    );
  }
  const image = await docker.getImage(options.image).inspect().catch(ignoreMissing);
  if (!image) {
    throw new Error(
      `the browser image ${options.image} is not in the container engine: build it (npm run images) or set ` +
        "CONTAINER_BROWSER_IMAGE",
    );
  }
}

/**
 * DevTools' browser endpoint, once Chromium answers through the container's socket; fails at once, with the
 * container's last words, if the container ends first.
 */
async function waitForDevtools(container: Dockerode.Container, socketPath: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const inside = { host: "127.0.0.1", port: CHROMIUM_DEVTOOLS_PORT, socketPath };
      const version = (await fetchDevtoolsJson(inside, "/json/version", 2_000)) as { webSocketDebuggerUrl: string };
      // The browser names itself by whatever Host it was asked with; only its path is trusted.
      return `ws://${inside.host}:${inside.port}${new URL(version.webSocketDebuggerUrl).pathname}`;
    } catch (err) {
      const state = (await container.inspect()).State;
      if (!state.Running) {
        const logs = (await container.logs({ stdout: true, stderr: true, tail: 20 })).toString("utf8");
        throw new Error(`the browser container exited (code ${state.ExitCode}) before DevTools was up: ${logs}`);
      }
      if (Date.now() > deadline) throw new Error(`DevTools did not answer through ${socketPath}`, { cause: err });
      await sleep(50);
    }
  }
}

/** A container that is already gone is what removing it wanted. */
function ignoreMissing(err: { statusCode?: number }): undefined {
  if (err.statusCode === 404) return undefined;
  throw err;
}
