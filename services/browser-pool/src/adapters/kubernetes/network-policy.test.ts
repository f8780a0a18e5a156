import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { browserNetworkPolicy } from "./network-policy";
import { browserPodManifest } from "./pod-manifest";

const options = {
  namespace: "browsers",
  deployment: "bas",
  poolPodLabels: { "app.kubernetes.io/name": "bas-browser-pool" },
  devtoolsPort: 9222,
  egressPorts: { first: 20_000, count: 20 },
};

test("the browsers' NetworkPolicy is a valid networking.k8s.io/v1 NetworkPolicy", () => {
  const policy = browserNetworkPolicy(options);
  expect(() => new NetworkPolicy(policy as never).validate()).not.toThrow();
  const broken = browserNetworkPolicy(options) as any;
  broken.spec.egress[0].ports[0].port = { not: "a port" };
  expect(() => new NetworkPolicy(broken).validate()).toThrow();
});

test("browser pods talk only to browser-pool: DevTools in from it, the egress proxy ports out to it, nothing else", () => {
  const policy = browserNetworkPolicy(options);
  const pool = [{ podSelector: { matchLabels: options.poolPodLabels } }];
  expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"]);
  expect(policy.spec.ingress).toEqual([{ from: pool, ports: [{ protocol: "TCP", port: 9222 }] }]);
  // No DNS, no other pod, no cluster service, no cloud metadata: the one way out is the proxy, which resolves names.
  expect(policy.spec.egress).toEqual([{ to: pool, ports: [{ protocol: "TCP", port: 20_000, endPort: 20_019 }] }]);
});

test("the policy selects exactly this deployment's browser pods", () => {
  const policy = browserNetworkPolicy(options);
  const pod = browserPodManifest({
    browserId: "5f0c6c1e-8a43-4d5e-9a3b-1c2d3e4f5a6b",
    namespace: "browsers",
    nodeId: "node-a",
    deployment: "bas",
    image: "chromedp/headless-shell:latest",
    devtoolsPort: 9222,
    screenWidth: 1280,
    screenHeight: 800,
    proxyServer: "http://10.0.0.7:20000",
    resources: { cpu: "500m", memory: "1Gi" },
  });
  expect(pod.metadata!.labels).toMatchObject(policy.spec.podSelector.matchLabels);
  const other = browserNetworkPolicy({ ...options, deployment: "other" });
  expect(pod.metadata!.labels).not.toMatchObject(other.spec.podSelector.matchLabels);
});
