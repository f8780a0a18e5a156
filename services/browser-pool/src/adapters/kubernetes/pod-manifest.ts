import type { V1Pod } from "./kube-api";
import { browserImageArgs } from "../browser-image-args";

/** Labels every browser pod carries, so a replica can list its own pods and reap the ones nobody owns. */
export const POD_LABELS = {
  app: "app.kubernetes.io/name",
  managedBy: "app.kubernetes.io/managed-by",
  browserId: "bas.dev/browser-id",
  node: "bas.dev/node",
  deployment: "bas.dev/deployment",
} as const;

export const MANAGED_BY = "bas-browser-pool";

export interface PodManifestOptions {
  browserId: string;
  namespace: string;
  /** The browser-pool replica that owns the pod. */
  nodeId: string;
  /** The deployment's NAMESPACE setting, so two deployments in one Kubernetes namespace never reap each other. */
  deployment: string;
  image: string;
  devtoolsPort: number;
  screenWidth: number;
  screenHeight: number;
  /** http://host:port of the browser's egress proxy on its replica: the pod's only way out. */
  proxyServer: string;
  ignoreCertificateErrors?: boolean;
  resources: { cpu: string; memory: string };
  /** The replica's own pod: Kubernetes garbage-collects browser pods with it. */
  owner?: { name: string; uid: string };
  placement?: BrowserPodPlacement;
}

/**
 * Where browser pods run, as the operator chooses: nodes of their own (a node selector, and the taints of those
 * nodes tolerated), and a RuntimeClass that puts a sandbox of the node's own (gVisor, Kata) around each browser.
 */
export interface BrowserPodPlacement {
  nodeSelector?: Record<string, string>;
  tolerations?: BrowserPodToleration[];
  runtimeClassName?: string;
}

export interface BrowserPodToleration {
  key?: string;
  operator?: "Exists" | "Equal";
  value?: string;
  effect?: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
  tolerationSeconds?: number;
}

export const podNameFor = (browserId: string) => `bas-browser-${browserId.toLowerCase()}`;

/** Label values: at most 63 characters of [A-Za-z0-9_.-], starting and ending alphanumeric. */
export function labelValue(value: string): string {
  const cleaned = value.replace(/[^A-Za-z0-9_.-]/g, "-").slice(0, 63);
  return cleaned.replace(/^[^A-Za-z0-9]+/, "").replace(/[^A-Za-z0-9]+$/, "") || "x";
}

/** The label selector of one replica's browser pods. */
export function nodeSelector(nodeId: string, deployment: string): string {
  return [
    `${POD_LABELS.managedBy}=${MANAGED_BY}`,
    `${POD_LABELS.node}=${labelValue(nodeId)}`,
    `${POD_LABELS.deployment}=${labelValue(deployment)}`,
  ].join(",");
}

/** The unprivileged user browser pods run as (the image's root is never used). */
export const BROWSER_POD_USER = 1000;

/**
 * One browser, one pod. The image's entrypoint starts headless Chromium with DevTools on 0.0.0.0:devtoolsPort
 * (the Dockerfile's `chromium` target does); `args` are appended Chromium flags. The pod is never restarted (a
 * browser that dies is a crashed browser), gets no service-account token, runs as an unprivileged user with no
 * capabilities, a read-only root file system and the runtime's default seccomp profile, and is Ready once DevTools
 * answers. What it may reach is the NetworkPolicy's business (network-policy.ts).
 */
export function browserPodManifest(o: PodManifestOptions): V1Pod {
  const args = browserImageArgs({
    screenWidth: o.screenWidth,
    screenHeight: o.screenHeight,
    proxyServer: o.proxyServer,
    ignoreCertificateErrors: o.ignoreCertificateErrors,
  });
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: podNameFor(o.browserId),
      namespace: o.namespace,
      labels: {
        [POD_LABELS.app]: "bas-browser",
        [POD_LABELS.managedBy]: MANAGED_BY,
        [POD_LABELS.browserId]: labelValue(o.browserId),
        [POD_LABELS.node]: labelValue(o.nodeId),
        [POD_LABELS.deployment]: labelValue(o.deployment),
      },
      ...(o.owner
        ? {
            ownerReferences: [
              { apiVersion: "v1", kind: "Pod", name: o.owner.name, uid: o.owner.uid, blockOwnerDeletion: false },
            ],
          }
        : {}),
    },
    spec: {
      ...placementOf(o.placement),
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 5,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: BROWSER_POD_USER,
        runAsGroup: BROWSER_POD_USER,
        fsGroup: BROWSER_POD_USER,
        seccompProfile: { type: "RuntimeDefault" },
      },
      volumes: [{ name: "tmp", emptyDir: { medium: "Memory", sizeLimit: "256Mi" } }],
      containers: [
        {
          name: "chromium",
          image: o.image,
          args,
          env: [{ name: "HOME", value: "/tmp" }],
          volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
          ports: [{ name: "devtools", containerPort: o.devtoolsPort, protocol: "TCP" }],
          readinessProbe: {
            httpGet: { path: "/json/version", port: o.devtoolsPort },
            periodSeconds: 1,
            failureThreshold: 3,
          },
          resources: {
            requests: { cpu: o.resources.cpu, memory: o.resources.memory },
            limits: { memory: o.resources.memory },
          },
          securityContext: {
            runAsNonRoot: true,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ["ALL"] },
          },
        },
      ],
    },
  };
}

/** The pod spec's fields for a placement, leaving out what is not set. */
function placementOf({ nodeSelector = {}, tolerations = [], runtimeClassName }: BrowserPodPlacement = {}) {
  return {
    ...(Object.keys(nodeSelector).length > 0 ? { nodeSelector } : {}),
    ...(tolerations.length > 0 ? { tolerations } : {}),
    ...(runtimeClassName ? { runtimeClassName } : {}),
  };
}

/** Ready condition True with an IP: DevTools answers on the pod IP. */
export function readyPodIp(pod: V1Pod | undefined): string | undefined {
  const ready = pod?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
  return ready && pod?.status?.phase === "Running" ? pod.status.podIP : undefined;
}

/** The pod ended for good: it will never become Ready again. */
export function podEnded(pod: V1Pod | undefined): boolean {
  return (
    !pod || pod.status?.phase === "Failed" || pod.status?.phase === "Succeeded" || !!pod.metadata?.deletionTimestamp
  );
}
