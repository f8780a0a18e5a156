import type { ContainerCreateOptions } from "dockerode";

/** Labels every browser container carries, so a node can list its own and reap the ones nobody owns. */
export const LABELS = {
  managedBy: "io.bas.managed-by",
  browserId: "io.bas.browser-id",
  node: "io.bas.node",
  deployment: "io.bas.deployment",
} as const;

export const MANAGED_BY = "bas-browser-pool";

/** Where the container sees its socket folder (chromium-pod.sh's SOCKETS_DIR). */
export const CONTAINER_SOCKETS_DIR = "/sockets";

export interface ContainerSpecOptions {
  browserId: string;
  nodeId: string;
  deployment: string;
  image: string;
  /** This host's folder of the browser's two sockets, bound at CONTAINER_SOCKETS_DIR. */
  socketsDir: string;
  /** The profile, bound at the same path, so that what the host reads there (downloads) has one name. */
  userDataDir: string;
  user: number;
  limits: { memoryBytes: number; pids: number; cpus: number };
  locale: { LANG: string; TZ?: string };
  /** Chromium flags, appended to the image's entrypoint. */
  args: string[];
}

/** The label filter of one node's browser containers (the engine's `filters.label`). */
export const nodeFilters = (nodeId: string, deployment: string) => [
  `${LABELS.managedBy}=${MANAGED_BY}`,
  `${LABELS.node}=${nodeId}`,
  `${LABELS.deployment}=${deployment}`,
];

/**
 * One browser's container. No network (`none`: its own loopback only), so the sockets bound in are its only ways out;
 * no capabilities and no way to gain any; the image's unprivileged user; a read-only root with a small /tmp; caps on
 * memory (no swap), processes and CPU; nothing of this host's environment. It is not restarted: a browser that dies
 * is a crashed browser.
 */
export function containerSpec(o: ContainerSpecOptions): ContainerCreateOptions {
  return {
    name: `bas-browser-${o.browserId}`,
    Image: o.image,
    Cmd: o.args,
    User: `${o.user}:${o.user}`,
    Env: [
      `SOCKETS_DIR=${CONTAINER_SOCKETS_DIR}`,
      `USER_DATA_DIR=${o.userDataDir}`,
      "HOME=/tmp",
      `LANG=${o.locale.LANG}`,
      ...(o.locale.TZ ? [`TZ=${o.locale.TZ}`] : []),
    ],
    Labels: {
      [LABELS.managedBy]: MANAGED_BY,
      [LABELS.browserId]: o.browserId,
      [LABELS.node]: o.nodeId,
      [LABELS.deployment]: o.deployment,
    },
    NetworkDisabled: true,
    // The image's HEALTHCHECK is its pods' (DevTools on TCP, which a browser container does not serve); the driver
    // watches DevTools itself.
    Healthcheck: { Test: ["NONE"] },
    HostConfig: {
      NetworkMode: "none",
      ReadonlyRootfs: true,
      Tmpfs: { "/tmp": "rw,nosuid,nodev,size=256m,mode=1777" },
      Binds: [`${o.socketsDir}:${CONTAINER_SOCKETS_DIR}`, `${o.userDataDir}:${o.userDataDir}`],
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      Memory: o.limits.memoryBytes,
      MemorySwap: o.limits.memoryBytes,
      PidsLimit: o.limits.pids,
      NanoCpus: Math.round(o.limits.cpus * 1e9),
      RestartPolicy: { Name: "no" },
    },
  };
}
