import type { BrowserDriver, EgressAddress, LaunchSpec, RunningBrowser } from "../../domain/browser-driver";
import type { BrowserHandle } from "../../domain/events";
import { createNumberPool } from "../../domain/number-pool";
import { browserExit } from "../browser-exit";
import { probeDevtools } from "../cdp/devtools-probe";
import type { KubeApi, V1Pod } from "./kube-api";
import { browserNetworkPolicy } from "./network-policy";
import {
  type BrowserPodPlacement,
  browserPodManifest,
  nodeSelector,
  POD_LABELS,
  podEnded,
  podNameFor,
  readyPodIp,
} from "./pod-manifest";

export { loadKubeApi } from "./kube-api";

type PodHandle = Extract<BrowserHandle, { driver: "kubernetes" }>;

export interface KubernetesDriverOptions {
  api: KubeApi;
  namespace: string;
  nodeId: string;
  deployment: string;
  image: string;
  devtoolsPort: number;
  resources: { cpu: string; memory: string };
  /** Address browser pods use to reach this replica's egress proxies. */
  proxyHost: string;
  /** Where the egress proxies listen on this replica (its pod IP, or 0.0.0.0). */
  proxyListenHost: string;
  /** The ports egress proxies may take, one per browser; the NetworkPolicy lets browser pods reach only these. */
  egressPorts: { first: number; count: number };
  /** Labels of browser-pool's own pods, for the NetworkPolicy. */
  poolPodLabels: Record<string, string>;
  owner?: { name: string; uid: string };
  /** Where browser pods run (node selector, tolerations, RuntimeClass). */
  placement?: BrowserPodPlacement;
  readyTimeoutMs: number;
  /** How often this replica's pods are listed to notice one that died. */
  pollMs?: number;
  log: { warn(o: object, msg: string): void };
}

/**
 * One pod per browser: created, watched until Ready, reached on its pod IP, deleted at stop. A single list call per
 * interval (by this replica's labels) notices pods that failed or vanished, which are crashed browsers.
 */
export function createKubernetesDriver(options: KubernetesDriverOptions): BrowserDriver {
  const { api, namespace } = options;
  const tracked = new Map<string, (detail: string) => void>();
  const selector = nodeSelector(options.nodeId, options.deployment);
  let poll: NodeJS.Timeout | undefined;

  function ensurePolling() {
    if (poll) return;
    poll = setInterval(() => void checkPods(), options.pollMs ?? 5_000);
    poll.unref();
  }

  async function checkPods() {
    if (tracked.size === 0) return;
    let pods: V1Pod[];
    try {
      pods = await api.listPods(namespace, selector);
    } catch (err) {
      options.log.warn({ err }, "listing browser pods failed");
      return;
    }
    const byName = new Map(pods.map((p) => [p.metadata?.name, p]));
    for (const [name, exited] of tracked) {
      const pod = byName.get(name);
      if (podEnded(pod)) exited(pod ? `pod ${pod.status?.phase ?? "deleted"}` : "pod is gone");
    }
  }

  function waitUntilReady(name: string): Promise<string> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let watch: { stop(): void } | undefined;
      const finish = (err: Error | undefined, ip?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        watch?.stop();
        if (err) reject(err);
        else resolve(ip!);
      };
      const timer = setTimeout(
        () => finish(new Error(`pod ${name} not Ready within ${options.readyTimeoutMs} ms`)),
        options.readyTimeoutMs,
      );
      const consider = (type: string, pod: V1Pod | undefined) => {
        const ip = readyPodIp(pod);
        if (ip) finish(undefined, ip);
        else if (type === "DELETED" || podEnded(pod)) finish(new Error(`pod ${name} ended before it was Ready`));
      };
      api
        .watchPod(namespace, name, consider, (err) => finish(new Error(`watch of pod ${name} ended`, { cause: err })))
        .then(async (w) => {
          watch = w;
          if (settled) w.stop();
          // It may have become Ready before the watch began.
          else consider("READ", await api.readPod(namespace, name));
        })
        .catch((err) => finish(err));
    });
  }

  function podBrowser(id: string, handle: PodHandle): RunningBrowser {
    const exit = browserExit();
    tracked.set(handle.podName, (detail) => {
      if (exit.exit(detail)) tracked.delete(handle.podName);
    });
    ensurePolling();
    return {
      id,
      handle,
      onExit: exit.onExit,
      async kill() {
        if (!exit.kill()) return;
        tracked.delete(handle.podName);
        await api.deletePod(handle.podNamespace, handle.podName);
        if (handle.proxyPort !== null) ports.release(handle.proxyPort);
      },
      memory: async () => undefined,
    };
  }

  async function devtoolsUrlOf(ip: string): Promise<string> {
    const response = await fetch(`http://${ip}:${options.devtoolsPort}/json/version`, {
      signal: AbortSignal.timeout(5_000),
    });
    const { webSocketDebuggerUrl } = (await response.json()) as { webSocketDebuggerUrl: string };
    // The browser names itself by whatever Host it was asked with; only its path is trusted.
    return `ws://${ip}:${options.devtoolsPort}${new URL(webSocketDebuggerUrl).pathname}`;
  }

  const ports = createNumberPool({ ...options.egressPorts, what: "egress proxy ports" });
  const policyApplied = api.applyNetworkPolicy(
    namespace,
    browserNetworkPolicy({
      namespace,
      deployment: options.deployment,
      poolPodLabels: options.poolPodLabels,
      devtoolsPort: options.devtoolsPort,
      egressPorts: options.egressPorts,
    }),
  );
  policyApplied.catch((err) => options.log.warn({ err }, "applying the browsers' NetworkPolicy failed"));

  async function egressAddress(_id: string, handle?: BrowserHandle): Promise<EgressAddress> {
    const kept = handle?.driver === "kubernetes" ? handle.proxyPort : null;
    if (kept !== null) ports.hold(kept);
    return { host: options.proxyListenHost, port: kept ?? ports.take() };
  }

  async function launch(spec: LaunchSpec): Promise<RunningBrowser> {
    // No browser pod runs before its network is closed off.
    await policyApplied;
    if (!("port" in spec.egress)) throw new Error("browser pods reach their egress proxy over TCP");
    const proxyPort = spec.egress.port;
    const manifest = browserPodManifest({
      browserId: spec.browserId,
      namespace,
      nodeId: options.nodeId,
      deployment: options.deployment,
      image: options.image,
      devtoolsPort: options.devtoolsPort,
      screenWidth: spec.screenWidth,
      screenHeight: spec.screenHeight,
      proxyServer: `http://${options.proxyHost}:${proxyPort}`,
      ignoreCertificateErrors: spec.ignoreCertificateErrors,
      resources: options.resources,
      owner: options.owner,
      placement: options.placement,
    });
    const name = manifest.metadata!.name!;
    await api.createPod(namespace, manifest);
    try {
      const ip = await waitUntilReady(name);
      const devtoolsUrl = await devtoolsUrlOf(ip);
      await probeDevtools(devtoolsUrl);
      return podBrowser(spec.browserId, {
        driver: "kubernetes",
        devtoolsUrl,
        podName: name,
        podNamespace: namespace,
        proxyPort,
      });
    } catch (err) {
      ports.release(proxyPort);
      await api.deletePod(namespace, name).catch(() => undefined);
      throw err;
    }
  }

  async function adopt(id: string, handle: BrowserHandle): Promise<RunningBrowser | undefined> {
    if (handle.driver !== "kubernetes") return undefined;
    const pod = await api.readPod(handle.podNamespace, handle.podName);
    const ip = readyPodIp(pod);
    if (ip && new URL(handle.devtoolsUrl).hostname === ip) {
      try {
        await probeDevtools(handle.devtoolsUrl);
        return podBrowser(id, handle);
      } catch {
        // Ready but deaf: delete it below.
      }
    }
    if (pod) await api.deletePod(handle.podNamespace, handle.podName);
    return undefined;
  }

  async function reapOrphans(keep: ReadonlySet<string>): Promise<string[]> {
    const reaped: string[] = [];
    for (const pod of await api.listPods(namespace, selector)) {
      const id = pod.metadata?.labels?.[POD_LABELS.browserId];
      if (!pod.metadata?.name || (id && keep.has(id))) continue;
      await api.deletePod(namespace, pod.metadata.name);
      reaped.push(id ?? pod.metadata.name);
    }
    return reaped;
  }

  return {
    name: "kubernetes",
    resizesWindows: true,
    egressAddress,
    launch,
    adopt,
    reapOrphans,
    async close() {
      clearInterval(poll);
      tracked.clear();
    },
  };
}

export { podNameFor };
