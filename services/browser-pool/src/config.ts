import { hostname, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { ConfigError, commonEnv, envPort, jsonEnv, loadConfig } from "@bas/service-kit";
import { z } from "zod";
import { parseEgressRules } from "@bas/egress-policy";
// The project's version, which tags the images `npm run images` builds.
import { version as PACKAGE_VERSION } from "../../../package.json";

const count = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
const wsUrl = z
  .string()
  .regex(/^wss?:\/\/[^\s/]+(\/\S*)?$/, "expected a ws:// or wss:// URL")
  .transform((u) => u.replace(/\/+$/, ""));
const flag = (fallback: boolean) =>
  z
    .enum(["true", "false", "1", "0"])
    .default(fallback ? "true" : "false")
    .transform((v) => v === "true" || v === "1");

/** Kubernetes labels as `k=v,k=v`. */
const labelPairs = (fallback: string) =>
  z
    .string()
    .regex(/^([\w./-]+=[\w.-]*(,[\w./-]+=[\w.-]*)*)?$/, "expected k=v pairs separated by commas")
    .default(fallback)
    .transform((s) =>
      Object.fromEntries(
        s
          .split(",")
          .filter(Boolean)
          .map((pair) => pair.split("=") as [string, string]),
      ),
    );

const toleration = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(["Exists", "Equal"]).optional(),
  value: z.string().optional(),
  effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
  tolerationSeconds: z.number().int().optional(),
});

/** A comma-separated list of `host[:port]` / CIDR entries, parsed and checked at start. */
const egressRules = z
  .string()
  .default("")
  .transform((list, ctx) => {
    try {
      return parseEgressRules(list);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: (err as Error).message });
      return z.NEVER;
    }
  });

const browserPoolEnv = {
  ...commonEnv,
  GRPC_PORT: envPort(50052),
  /** Port of `/metrics` (Prometheus), on GRPC_HOST; 0 picks a free one. */
  METRICS_PORT: envPort(9462),
  BROWSER_DRIVER: z.enum(["local", "container", "kubernetes"]).default("local"),
  /** Identifies this replica: the browsers it launches are recorded as its own and adopted by it after a restart. */
  NODE_ID: z
    .string()
    .regex(/^[a-zA-Z0-9_.-]{1,63}$/, "letters, digits, '.', '-' and '_' (at most 63)")
    .default(hostname().slice(0, 63)),
  /** Port of the CDP proxy (HTTP + WebSocket); 0 = any free port. */
  CDP_PORT: envPort(9223),
  CDP_HOST: z.string().default("127.0.0.1"),
  /** Base of the cdpUrl handed to callers; default ws://CDP_HOST:<bound port>. */
  CDP_PUBLIC_URL: wsUrl.optional(),
  /** Base of the CDP URL the runner gets from AcquireBrowser; default the public one. */
  CDP_INTERNAL_URL: wsUrl.optional(),
  /** Who may embed the live view in a frame: the CSP `frame-ancestors` sources (`*`: anyone holding the link). */
  LIVE_VIEW_FRAME_ANCESTORS: z
    .string()
    .regex(/^[^;,\r\n]+$/, "CSP frame-ancestors sources separated by spaces, e.g. 'self' https://app.example.com")
    .default("*"),
  WARM_POOL_SIZE: count(2),
  MAX_BROWSERS_PER_PROJECT: z.coerce.number().int().positive().default(10),
  /** Most profiles one project may keep; each holds a saved state of up to 200 MB. */
  MAX_PROFILES_PER_PROJECT: z.coerce.number().int().positive().default(100),
  MAX_BROWSERS_PER_NODE: z.coerce.number().int().positive().default(20),
  /** Timeout (minutes) of a browser acquired for a v3 session; the session's end stops it sooner. */
  SESSION_BROWSER_TIMEOUT_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .default(240),
  /** How often browser time and proxy bytes of running browsers are reported to billing. */
  USAGE_INTERVAL_MS: z.coerce.number().int().positive().default(60_000),
  /**
   * A node not heard from for this long is gone (crashed for good, or scaled away): another node records its browsers
   * stopped (`crash`), so that they no longer count against their projects. Longer than a restart of a node takes.
   */
  NODE_LOST_AFTER_SECONDS: z.coerce.number().int().min(1).default(300),
  /** On shutdown, stop every browser (reason `shutdown`); false leaves them for the next start to adopt. */
  STOP_BROWSERS_ON_SHUTDOWN: flag(true),
  /** Upstream proxy template, e.g. http://user-country-{country}:pass@proxy:8000; unset = browsers go out direct. */
  PROXY_UPSTREAM_URL: z.string().url().optional(),
  /** Where the per-browser network proxies listen; pods must reach it with the Kubernetes driver. */
  PROXY_HOST: z.string().default("127.0.0.1"),

  /**
   * Destinations a tenant's browser may reach although they are loopback, private or link-local (closed by default):
   * `host[:port]` or CIDR, comma-separated, e.g. `127.0.0.1:8080,10.20.0.0/16`.
   */
  BROWSER_EGRESS_ALLOW: egressRules,
  /** Destinations that stay closed even when BROWSER_EGRESS_ALLOW opens their range: the stack's own ports. */
  BROWSER_EGRESS_DENY: egressRules,

  // Local driver
  CHROMIUM_PATH: z.string().default("/usr/bin/chromium"),
  /** The locale and time zone every browser runs in (pages see them: `navigator.language`, `Date`). */
  LANG: z.string().default("C.UTF-8"),
  TZ: z.string().optional(),
  /** Chromium's own sandbox inside the browser's bubblewrap sandbox; false only where the kernel refuses it. */
  CHROMIUM_SANDBOX: flag(true),
  /**
   * Chromium's network service (sandboxed) and GPU in processes of their own. False runs them in the browser process,
   * ~34 MB less per browser, with one layer fewer between the sites a browser visits and it.
   */
  CHROMIUM_ISOLATED_SERVICES: flag(true),
  /** The GPU process in Chromium's sandbox as well; pages then get no WebGL (see docs/browser-pool.md). */
  CHROMIUM_GPU_SANDBOX: flag(false),
  /**
   * As root, callers' CDP connections are carried by relays in each browser's sandbox network (Perl processes a relay
   * host beside browser-pool forks), so browser-pool's own process is not in their path: the throughput of the
   * sandbox's own DevTools socket, against ~75 % when false (browser-pool relays them itself). False where a process
   * may not enter a sandbox's network (setns).
   */
  CDP_RELAY_IN_SANDBOX: flag(true),
  /** When browser-pool runs as root, each browser runs as its own user from this range (no passwd entry needed). */
  BROWSER_UID_BASE: z.coerce.number().int().min(1000).max(4_000_000_000).default(200_000),
  /** This node's browser profiles; its contents are deleted at start (orphans of an earlier run). */
  BROWSER_DATA_DIR: z.string().optional(),
  /** Chromium flags added to every launch, separated by spaces. */
  CHROMIUM_EXTRA_ARGS: z
    .string()
    .default("")
    .transform((s) => s.split(/\s+/).filter(Boolean)),

  /** The encoder of recordings (enableRecording): a path, or a name on PATH. Without it, recording is refused. */
  FFMPEG_PATH: z.string().default("ffmpeg"),
  /** The largest file a browser's download may be to be kept (larger ones are dropped). */
  MAX_DOWNLOAD_MB: z.coerce.number().positive().default(100),

  // Container driver
  /** The Docker Engine API's Unix socket: Docker's, or Podman's (`podman system service`). */
  CONTAINER_ENGINE_SOCKET: z.string().default("/var/run/docker.sock"),
  /** The image of each browser container: the Dockerfile's `chromium` target, as `npm run images` tags it. */
  CONTAINER_BROWSER_IMAGE: z.string().default(`localhost/bas/chromium:${PACKAGE_VERSION}`),
  /** Caps on each browser container: memory (MiB, no swap), processes and threads, CPUs. */
  CONTAINER_BROWSER_MEMORY_MB: z.coerce.number().int().min(128).default(1024),
  CONTAINER_BROWSER_PIDS: z.coerce.number().int().min(64).default(1024),
  CONTAINER_BROWSER_CPUS: z.coerce.number().positive().default(1),

  // Kubernetes driver
  K8S_NAMESPACE: z.string().default("default"),
  /**
   * The image of each browser pod: the Dockerfile's `chromium` target at this release's version (the chart sets it).
   * No default: another Chromium image lacks the policies and flags the pool counts on (file:// closed, say).
   */
  K8S_BROWSER_IMAGE: z.string().optional(),
  K8S_DEVTOOLS_PORT: envPort(9222),
  K8S_POD_CPU: z.string().default("500m"),
  K8S_POD_MEMORY: z.string().default("1Gi"),
  /** Address of this replica as browser pods reach it (for their network proxy), usually the pod IP. */
  K8S_PROXY_ADVERTISE_HOST: z.string().optional(),
  /** First of the ports the egress proxies for browser pods listen on (`egressPortCount` of them). */
  K8S_EGRESS_PORT_BASE: envPort(20_000),
  /** Labels of browser-pool's own pods (`k=v,k=v`): the only peers the NetworkPolicy lets browser pods talk to. */
  K8S_POOL_POD_LABELS: labelPairs("app.kubernetes.io/name=bas-browser-pool").refine(
    (labels) => Object.keys(labels).length > 0,
    "at least one k=v pair (no labels would select every pod)",
  ),
  /** Nodes browser pods may run on (`k=v,k=v` of node labels), e.g. a node pool of their own; default any. */
  K8S_BROWSER_NODE_SELECTOR: labelPairs(""),
  /** Taints browser pods tolerate: a JSON list of Kubernetes tolerations (those nodes' taints). */
  K8S_BROWSER_TOLERATIONS: jsonEnv(z.array(toleration), []),
  /** RuntimeClass of browser pods (e.g. gvisor, kata): a sandbox of the node's own around each browser. */
  K8S_BROWSER_RUNTIME_CLASS: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "expected a RuntimeClass name")
    .optional(),
  /** This replica's own pod (downward API): browser pods get it as owner, so Kubernetes removes them with it. */
  K8S_OWNER_POD_NAME: z.string().optional(),
  K8S_OWNER_POD_UID: z.string().optional(),
  K8S_READY_TIMEOUT_MS: z.coerce.number().int().positive().default(120_000),
};

export type BrowserPoolConfig = ReturnType<typeof loadBrowserPoolConfig>;

export function loadBrowserPoolConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(browserPoolEnv, env);
  if (config.BROWSER_DRIVER === "kubernetes") browserPodImage(config);
  return {
    ...config,
    BROWSER_DATA_DIR:
      config.BROWSER_DATA_DIR ?? join(tmpdir(), "bas-browser-pool", `${config.NAMESPACE}-${config.NODE_ID}`),
    /** Root gives every browser an unprivileged user of its own; anyone else runs them as itself in a user namespace. */
    RUNS_AS_ROOT: userInfo().uid === 0,
  };
}

/** The image of the Kubernetes driver's browser pods, which has no default. */
export function browserPodImage(config: { K8S_BROWSER_IMAGE?: string }): string {
  if (config.K8S_BROWSER_IMAGE) return config.K8S_BROWSER_IMAGE;
  throw ConfigError.of(
    "K8S_BROWSER_IMAGE",
    "required with BROWSER_DRIVER=kubernetes: the image built from the Dockerfile's chromium target at this " +
      "release's version (e.g. registry.example/bas/chromium:0.1.0; the Helm chart sets it)",
  );
}
