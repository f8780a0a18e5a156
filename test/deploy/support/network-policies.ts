/**
 * NetworkPolicy semantics, enough to ask whether one pod may open a TCP connection to a port of another: a pod that
 * no policy selects for a direction is open in that direction; a selected pod accepts what any rule of any selecting
 * policy admits. Peers by pod and namespace selectors (ipBlock peers never match a pod here); ports by number, range
 * (endPort) or name (the target container's port of that name).
 */

export interface PodRef {
  namespace: string;
  labels: Record<string, string>;
  /** Named container ports of the pod. */
  ports?: Record<string, number>;
}

interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

interface PolicyPort {
  port?: number | string;
  endPort?: number;
  protocol?: string;
}

interface Peer {
  podSelector?: Selector;
  namespaceSelector?: Selector;
  ipBlock?: unknown;
}

export function selects(selector: Selector | undefined, labels: Record<string, string>): boolean {
  const byLabel = Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const byExpression = (selector?.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    if (operator === "In") return values.includes(labels[key]);
    if (operator === "NotIn") return !values.includes(labels[key]);
    if (operator === "Exists") return key in labels;
    if (operator === "DoesNotExist") return !(key in labels);
    throw new Error(`unknown selector operator ${operator}`);
  });
  return byLabel && byExpression;
}

function peerMatches(peer: Peer, policyNamespace: string, pod: PodRef): boolean {
  if (peer.ipBlock) return false;
  const namespaceOk = peer.namespaceSelector
    ? selects(peer.namespaceSelector, { "kubernetes.io/metadata.name": pod.namespace })
    : pod.namespace === policyNamespace;
  return namespaceOk && (!peer.podSelector || selects(peer.podSelector, pod.labels));
}

function portMatches(ports: PolicyPort[] | undefined, port: number, target: PodRef): boolean {
  if (!ports || ports.length === 0) return true;
  return ports.some((p) => {
    if ((p.protocol ?? "TCP") !== "TCP") return false;
    if (p.port === undefined) return true;
    if (typeof p.port === "string") return target.ports?.[p.port] === port;
    return port >= p.port && port <= (p.endPort ?? p.port);
  });
}

function admitted(
  policies: any[],
  direction: "Ingress" | "Egress",
  subject: PodRef,
  peer: PodRef,
  target: PodRef,
  port: number,
) {
  const field = direction === "Ingress" ? "ingress" : "egress";
  const peersField = direction === "Ingress" ? "from" : "to";
  const selecting = policies.filter(
    (p) =>
      (p.metadata.namespace ?? subject.namespace) === subject.namespace &&
      selects(p.spec.podSelector, subject.labels) &&
      (p.spec.policyTypes ?? ["Ingress"]).includes(direction),
  );
  if (selecting.length === 0) return true;
  return selecting.some((policy) =>
    (policy.spec[field] ?? []).some(
      (rule: any) =>
        ((rule[peersField] ?? []).length === 0 ||
          rule[peersField].some((q: Peer) => peerMatches(q, subject.namespace, peer))) &&
        portMatches(rule.ports, port, target),
    ),
  );
}

/** Whether `from` may connect to `to` on TCP `port` under all the given policies (both ends' rules). */
export function mayConnect(policies: any[], from: PodRef, to: PodRef, port: number): boolean {
  return admitted(policies, "Egress", from, to, to, port) && admitted(policies, "Ingress", to, from, to, port);
}
