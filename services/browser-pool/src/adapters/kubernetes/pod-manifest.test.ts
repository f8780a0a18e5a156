import { Pod } from "kubernetes-models/v1/Pod";
import { browserPodManifest, labelValue, nodeSelector, podNameFor } from "./pod-manifest";

const base = {
  browserId: "5f0c6c1e-8a43-4d5e-9a3b-1c2d3e4f5a6b",
  namespace: "browsers",
  nodeId: "browser-pool-7d9f8-abcde",
  deployment: "bas",
  image: "chromedp/headless-shell:latest",
  devtoolsPort: 9222,
  screenWidth: 1280,
  screenHeight: 800,
  proxyServer: "http://10.0.0.7:41234",
  resources: { cpu: "500m", memory: "1Gi" },
};

test("the pod manifest is a valid v1 Pod (kubernetes-models schema), with and without an owner", () => {
  for (const options of [
    base,
    { ...base, owner: { name: "browser-pool-0", uid: "1b4e28ba-2fa1-11d2-883f-0016d3cca427" } },
  ]) {
    const manifest = browserPodManifest(options);
    expect(() => new Pod(manifest as never).validate()).not.toThrow();
  }
});

test("a browser pod never runs as root: non-root user, no capabilities, no privilege escalation, read-only root", () => {
  const pod = browserPodManifest(base);
  expect(pod.spec!.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
  expect(pod.spec!.securityContext!.runAsUser).toBeGreaterThan(0);
  expect(pod.spec!.containers[0].securityContext).toEqual({
    runAsNonRoot: true,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ["ALL"] },
  });
  // Every request leaves through the replica's egress proxy, loopback included.
  expect(pod.spec!.containers[0].args).toEqual(
    expect.arrayContaining([`--proxy-server=${base.proxyServer}`, "--proxy-bypass-list=<-loopback>"]),
  );
});

test("browser pods go where the operator puts them (node selector, tolerations, RuntimeClass), and anywhere by default", () => {
  const placement = {
    nodeSelector: { "node-pool": "browsers" },
    tolerations: [{ key: "browsers", operator: "Exists" as const, effect: "NoSchedule" as const }],
    runtimeClassName: "gvisor",
  };
  const placed = browserPodManifest({ ...base, placement });
  expect(() => new Pod(placed as never).validate()).not.toThrow();
  expect(placed.spec).toMatchObject(placement);
  for (const anywhere of [base, { ...base, placement: { nodeSelector: {}, tolerations: [] } }]) {
    const spec = browserPodManifest(anywhere).spec!;
    expect([spec.nodeSelector, spec.tolerations, spec.runtimeClassName]).toEqual([undefined, undefined, undefined]);
  }
});

test("a wrong manifest is caught by the same validation (the check can fail)", () => {
  const manifest = browserPodManifest(base) as any;
  manifest.spec.containers[0].ports[0].containerPort = "devtools-port";
  expect(() => new Pod(manifest).validate()).toThrow();
});

test("one browser, one pod: named for the browser, labelled for its replica, never restarted, no API token", () => {
  const manifest = browserPodManifest({ ...base, owner: { name: "browser-pool-0", uid: "u-1" } });
  expect(manifest.metadata!.name).toBe(`bas-browser-${base.browserId}`);
  expect(manifest.metadata!.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  expect(manifest.metadata!.labels).toMatchObject({
    "app.kubernetes.io/managed-by": "bas-browser-pool",
    "bas.dev/browser-id": base.browserId,
    "bas.dev/node": base.nodeId,
    "bas.dev/deployment": "bas",
  });
  expect(manifest.metadata!.ownerReferences).toEqual([
    { apiVersion: "v1", kind: "Pod", name: "browser-pool-0", uid: "u-1", blockOwnerDeletion: false },
  ]);
  expect(manifest.spec).toMatchObject({ restartPolicy: "Never", automountServiceAccountToken: false });
  const container = manifest.spec!.containers[0];
  expect(container.args).toEqual(
    expect.arrayContaining([
      "--window-size=1280,800",
      "--window-position=0,0",
      "--screen-info={1280x800}",
      "--proxy-server=http://10.0.0.7:41234",
      "--proxy-bypass-list=<-loopback>",
    ]),
  );
  expect(container.readinessProbe?.httpGet).toEqual({ path: "/json/version", port: 9222 });
});

test("label values are made valid; the node selector uses the same values", () => {
  expect(labelValue("Node_1.example.com")).toBe("Node_1.example.com");
  expect(labelValue("-weird/name:with*chars-")).toBe("weird-name-with-chars");
  expect(labelValue("x".repeat(80))).toHaveLength(63);
  expect(nodeSelector("n/1", "bas")).toBe(
    "app.kubernetes.io/managed-by=bas-browser-pool,bas.dev/node=n-1,bas.dev/deployment=bas",
  );
  expect(podNameFor("ABC")).toBe("bas-browser-abc");
});
