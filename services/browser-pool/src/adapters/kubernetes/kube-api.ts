/** The client is ESM-only; from CommonJS its types are reached with an explicit resolution mode. */
export type V1Pod = import("@kubernetes/client-node", { with: { "resolution-mode": "import" }}).V1Pod;
import type { NetworkPolicyManifest } from "./network-policy";

/** The few Kubernetes API calls the pod driver makes. */
export interface KubeApi {
  /** Creates the policy, or replaces the one of the same name. */
  applyNetworkPolicy(namespace: string, policy: NetworkPolicyManifest): Promise<void>;
  createPod(namespace: string, pod: V1Pod): Promise<V1Pod>;
  /** Undefined when the pod does not exist. */
  readPod(namespace: string, name: string): Promise<V1Pod | undefined>;
  /** Deletes at once (no grace period); a pod already gone is fine. */
  deletePod(namespace: string, name: string): Promise<void>;
  listPods(namespace: string, labelSelector: string): Promise<V1Pod[]>;
  /** Streams changes of one pod until `stop()`; `onEnd` reports the stream ending on its own. */
  watchPod(
    namespace: string,
    name: string,
    onEvent: (type: "ADDED" | "MODIFIED" | "DELETED" | string, pod: V1Pod) => void,
    onEnd: (err?: unknown) => void,
  ): Promise<{ stop(): void }>;
}

export interface KubeApiOptions {
  /** An API server to talk to without a kubeconfig (tests); default: in-cluster or $KUBECONFIG. */
  server?: string;
  token?: string;
}

/**
 * @kubernetes/client-node 1.x is ESM-only; a dynamic import loads it from this CommonJS code, under tsx and
 * (with the package transformed) under jest alike.
 */
export async function loadKubeApi(options: KubeApiOptions = {}): Promise<KubeApi> {
  const k8s = await import("@kubernetes/client-node");
  const kc = new k8s.KubeConfig();
  if (options.server) {
    kc.loadFromClusterAndUser(
      { name: "bas", server: options.server, skipTLSVerify: true },
      { name: "bas", token: options.token },
    );
  } else {
    kc.loadFromDefault();
  }
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const networking = kc.makeApiClient(k8s.NetworkingV1Api);
  const watcher = new k8s.Watch(kc);
  const notFound = (err: unknown) => (err as { code?: number })?.code === 404;

  return {
    async applyNetworkPolicy(namespace, manifest) {
      // The client's model calls an ingress rule's `from` `_from` (and writes it back as `from`).
      const ingress = manifest.spec.ingress.map(({ from, ...rule }) => ({ ...rule, _from: from }));
      const policy = { ...manifest, spec: { ...manifest.spec, ingress } };
      const name = manifest.metadata.name;
      try {
        await networking.replaceNamespacedNetworkPolicy({ namespace, name, body: policy });
      } catch (err) {
        if (!notFound(err)) throw err;
        await networking.createNamespacedNetworkPolicy({ namespace, body: policy });
      }
    },
    createPod: (namespace, pod) => core.createNamespacedPod({ namespace, body: pod }),
    async readPod(namespace, name) {
      try {
        return await core.readNamespacedPod({ namespace, name });
      } catch (err) {
        if (notFound(err)) return undefined;
        throw err;
      }
    },
    async deletePod(namespace, name) {
      try {
        await core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 });
      } catch (err) {
        if (!notFound(err)) throw err;
      }
    },
    async listPods(namespace, labelSelector) {
      return (await core.listNamespacedPod({ namespace, labelSelector })).items;
    },
    async watchPod(namespace, name, onEvent, onEnd) {
      let stopped = false;
      const controller = await watcher.watch(
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
        { fieldSelector: `metadata.name=${name}` },
        (type, pod) => onEvent(type, pod as V1Pod),
        (err) => {
          if (!stopped) onEnd(err);
        },
      );
      return {
        stop() {
          stopped = true;
          controller.abort();
        },
      };
    },
  };
}
