import { labelValue, MANAGED_BY, POD_LABELS } from "./pod-manifest";

export interface BrowserNetworkPolicyOptions {
  namespace: string;
  /** The deployment's NAMESPACE setting: the policy covers this deployment's browser pods only. */
  deployment: string;
  /** Labels of the browser-pool pods (the only peers a browser pod may talk to). */
  poolPodLabels: Record<string, string>;
  devtoolsPort: number;
  /** The ports browser-pool's egress proxies listen on for pods. */
  egressPorts: { first: number; count: number };
}

/** A NetworkPolicy as the Kubernetes API speaks it (JSON), with only the fields this driver sets. */
export interface NetworkPolicyManifest {
  apiVersion: "networking.k8s.io/v1";
  kind: "NetworkPolicy";
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: Array<"Ingress" | "Egress">;
    ingress: Array<{ from: PolicyPeer[]; ports: PolicyPort[] }>;
    egress: Array<{ to: PolicyPeer[]; ports: PolicyPort[] }>;
  };
}
type PolicyPeer = { podSelector: { matchLabels: Record<string, string> } };
type PolicyPort = { protocol: "TCP"; port: number; endPort?: number };

/**
 * How many egress proxy ports a replica hands out, from K8S_EGRESS_PORT_BASE: one for each browser it may run (its
 * maximum and its warm ones) and as many again, since a browser's port is free only once its pod is gone, which is
 * after its stop is answered: a create right after a stop on a full replica must still find one.
 */
export const egressPortCount = (maxBrowsersPerNode: number, warmPoolSize: number) =>
  2 * (maxBrowsersPerNode + warmPoolSize);

export const networkPolicyNameFor = (deployment: string) => `bas-browsers-${labelValue(deployment).toLowerCase()}`;

/**
 * Browser pods are cut off from everything but their own replica's proxies: DevTools is reachable from browser-pool
 * pods only (never from another browser, another tenant's page, or anything else in the cluster), and a browser can
 * send only to the egress proxy ports of browser-pool, which apply the egress policy (no DNS, no cluster services,
 * no cloud metadata, no other pod). Enforced by the cluster's network plugin.
 */
export function browserNetworkPolicy(o: BrowserNetworkPolicyOptions): NetworkPolicyManifest {
  const pool = [{ podSelector: { matchLabels: o.poolPodLabels } }];
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: {
      name: networkPolicyNameFor(o.deployment),
      namespace: o.namespace,
      labels: { [POD_LABELS.managedBy]: MANAGED_BY, [POD_LABELS.deployment]: labelValue(o.deployment) },
    },
    spec: {
      podSelector: {
        matchLabels: {
          [POD_LABELS.managedBy]: MANAGED_BY,
          [POD_LABELS.deployment]: labelValue(o.deployment),
        },
      },
      policyTypes: ["Ingress", "Egress"],
      ingress: [{ from: pool, ports: [{ protocol: "TCP", port: o.devtoolsPort }] }],
      egress: [
        {
          to: pool,
          ports: [
            {
              protocol: "TCP",
              port: o.egressPorts.first,
              ...(o.egressPorts.count > 1 ? { endPort: o.egressPorts.first + o.egressPorts.count - 1 } : {}),
            },
          ],
        },
      ],
    },
  };
}
