import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@bas/embedded-infra";
import { createTestInfra, type TestInfra } from "@bas/testing";
import puppeteer from "puppeteer-core";
import { createKubernetesDriver, loadKubeApi } from "../src/adapters/kubernetes/kubernetes-driver";
import { egressPortCount } from "../src/adapters/kubernetes/network-policy";
import { browserPodManifest } from "../src/adapters/kubernetes/pod-manifest";
import { type FakeKubeApi, startFakeKubeApi } from "./support/fake-kube-api";
import { eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { startTestSite, TEST_PAGE_TITLE } from "./support/test-site";

let api: FakeKubeApi;
let devtoolsPort: number;
let infra: TestInfra;
let dataDir: string;
let site: Awaited<ReturnType<typeof startTestSite>>;
const harnesses: PoolHarness[] = [];
const silent = { warn: () => undefined };
const project = randomUUID();

beforeAll(async () => {
  devtoolsPort = await freePort();
  [api, infra, site] = await Promise.all([startFakeKubeApi({ devtoolsPort }), createTestInfra(), startTestSite()]);
  dataDir = mkdtempSync(join(tmpdir(), "bas-bp-k8s-"));
});
afterAll(async () => {
  for (const h of harnesses) await h.close();
  await api?.close();
  await infra?.close();
  await site?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Nodes kept for browsers, under gVisor. */
const PLACEMENT = {
  nodeSelector: { "node-pool": "browsers" },
  tolerations: [{ key: "browsers", operator: "Exists" as const, effect: "NoSchedule" as const }],
  runtimeClassName: "gvisor",
};

const BROWSER_IMAGE = "registry.example/bas/chromium:0.1.0";

async function startWithPods(nodeId: string, env: Record<string, string> = {}, readyTimeoutMs = 60_000) {
  const driver = createKubernetesDriver({
    // The real @kubernetes/client-node (loaded by dynamic import) against the stand-in API server.
    api: await loadKubeApi({ server: api.url }),
    namespace: "browsers",
    nodeId,
    deployment: infra.namespace,
    image: BROWSER_IMAGE,
    devtoolsPort,
    resources: { cpu: "250m", memory: "512Mi" },
    proxyHost: "127.0.0.1",
    proxyListenHost: "127.0.0.1",
    // One browser at a time per replica here (and its port again while its pod goes); ports the kernel never hands
    // out to another test's listen(0) or outgoing connection (one in its ephemeral range once failed a create with
    // EADDRINUSE).
    egressPorts: { first: await freePort(), count: egressPortCount(1, 0) },
    poolPodLabels: { "app.kubernetes.io/name": "bas-browser-pool" },
    readyTimeoutMs,
    pollMs: 200,
    placement: PLACEMENT,
    log: silent,
  });
  const h = await startPoolHarness(
    {
      NODE_ID: nodeId,
      BROWSER_DRIVER: "kubernetes",
      K8S_BROWSER_IMAGE: BROWSER_IMAGE,
      BROWSER_EGRESS_ALLOW: new URL(site.url).host,
      ...env,
    },
    { driver },
    { infra, dataDir },
  );
  harnesses.push(h);
  return h;
}

const podOf = (browserId: string) => api.pods().find((p) => p.metadata?.labels?.["bas.dev/browser-id"] === browserId);

test("one pod per browser, labelled for its replica, placed as configured; CDP reaches it on the pod IP through the proxy; stop deletes the pod", async () => {
  const h = await startWithPods(`k8s-${randomUUID().slice(0, 8)}`);
  const browser = await h.client.createBrowser({
    projectId: project,
    settings: { proxyCountryCode: "us", screenWidth: 1280, screenHeight: 800, allowedDomains: [], record: false },
    timeoutMinutes: 0,
    metadata: {},
  });
  const pod = podOf(browser.id)!;
  expect(pod.metadata!.labels).toMatchObject({
    "bas.dev/node": h.env.NODE_ID,
    "app.kubernetes.io/managed-by": "bas-browser-pool",
  });
  expect(pod.status!.podIP).toMatch(/^127\.0\.0\.(?!1$)\d+$/);
  expect(pod.spec).toMatchObject(PLACEMENT);
  expect(api.calls).toContain("POST /api/v1/namespaces/browsers/pods");
  // Before the first pod, the browsers' network was closed off: only browser-pool reaches them, and they only it.
  const [policy] = api.networkPolicies() as Array<{ spec: { podSelector: { matchLabels: Record<string, string> } } }>;
  expect(pod.metadata!.labels).toMatchObject(policy.spec.podSelector.matchLabels);
  expect(() => new NetworkPolicy(policy as never).validate()).not.toThrow();

  const client = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
  const page = await client.newPage();
  await page.goto(site.url);
  expect(await page.title()).toBe(TEST_PAGE_TITLE);
  expect(await page.evaluate(() => [window.outerWidth, window.outerHeight])).toEqual([1280, 800]);
  await client.disconnect();

  await h.client.stopBrowser({ projectId: project, browserId: browser.id });
  await eventually(async () => (podOf(browser.id) ? undefined : true), 10_000, "pod deleted");
  expect(api.calls).toContain(`DELETE /api/v1/namespaces/browsers/pods/${pod.metadata!.name}`);
});

test("a pod whose container dies is a crashed browser", async () => {
  const h = await startWithPods(`k8s-${randomUUID().slice(0, 8)}`);
  const browser = await h.client.createBrowser({
    projectId: project,
    settings: undefined,
    timeoutMinutes: 0,
    metadata: {},
  });
  await api.crash(podOf(browser.id)!.metadata!.name!);
  await eventually(async () => {
    const b = await h.client.getBrowser({ projectId: project, browserId: browser.id });
    return b.status === "stopped" && b.stopReason === "crash" ? true : undefined;
  });
  await eventually(async () => (podOf(browser.id) ? undefined : true), 10_000, "crashed pod deleted");
});

test("a pod that never becomes Ready: the create fails UNAVAILABLE, the pod is deleted, the browser recorded stopped", async () => {
  const h = await startWithPods(`k8s-${randomUUID().slice(0, 8)}`, {}, 1_500);
  const other = randomUUID();
  api.failNextPods(1);
  await expect(
    h.client.createBrowser({ projectId: other, settings: undefined, timeoutMinutes: 0, metadata: {} }),
  ).rejects.toMatchObject({ code: 14, kind: "unavailable" });
  const list = await h.client.listBrowsers({ projectId: other, pageNumber: 1, pageSize: 10 });
  expect(list.items.map((b) => [b.status, b.stopReason])).toEqual([["stopped", "crash"]]);
  expect(podOf(list.items[0].id)).toBeUndefined();
});

test("a restarted replica adopts its Ready pods and deletes its orphans", async () => {
  const nodeId = `k8s-${randomUUID().slice(0, 8)}`;
  const cdpPort = String(await freePort());
  const first = await startWithPods(nodeId, { CDP_PORT: cdpPort, STOP_BROWSERS_ON_SHUTDOWN: "false" });
  const kept = await first.client.createBrowser({
    projectId: project,
    settings: undefined,
    timeoutMinutes: 0,
    metadata: {},
  });
  await first.close();
  harnesses.splice(harnesses.indexOf(first), 1);
  expect(podOf(kept.id)).toBeDefined();
  // A pod of this replica that no browser record names (created just before a crash).
  const orphanId = randomUUID();
  await api.seed(
    browserPodManifest({
      browserId: orphanId,
      namespace: "browsers",
      nodeId,
      deployment: infra.namespace,
      image: "x",
      devtoolsPort,
      screenWidth: 800,
      screenHeight: 600,
      proxyServer: "http://127.0.0.1:1",
      resources: { cpu: "1", memory: "1Gi" },
    }),
  );

  const second = await startWithPods(nodeId, { CDP_PORT: cdpPort });
  expect(podOf(orphanId)).toBeUndefined();
  expect(podOf(kept.id)).toBeDefined();
  expect((await second.client.getBrowser({ projectId: project, browserId: kept.id })).status).toBe("active");
  const client = await puppeteer.connect({ browserWSEndpoint: kept.cdpUrl, defaultViewport: null });
  expect(await (await client.newPage()).evaluate(() => navigator.userAgent)).toMatch(/Chrome/);
  await client.disconnect();
  await second.client.stopBrowser({ projectId: project, browserId: kept.id });
});

test("a profile carries its sign-in (cookies) from a pod's browser to the next pod's, and to and from a local browser", async () => {
  const pods = await startWithPods(`k8s-${randomUUID().slice(0, 8)}`);
  const local = await startPoolHarness({ BROWSER_EGRESS_ALLOW: new URL(site.url).host }, {}, { infra, dataDir });
  harnesses.push(local);
  const projectId = randomUUID();
  const profile = await pods.client.createProfile({ projectId, name: "shopper" });

  /** A browser with the profile on `h`: the cookies it finds, then `signIn` (a session cookie), then its stop. */
  async function useProfile(h: PoolHarness, signIn?: string): Promise<string> {
    const settings = { screenWidth: 800, screenHeight: 600, allowedDomains: [], record: false, profileId: profile.id };
    const browser = await h.client.createBrowser({ projectId, settings, timeoutMinutes: 0, metadata: {} });
    const client = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
    const page = await client.newPage();
    await page.goto(site.url);
    const found = await page.evaluate(() => document.cookie);
    if (signIn) await page.setCookie({ name: "sid", value: signIn, url: site.url });
    await client.disconnect();
    // The next create with the profile waits for what this stop saves.
    await h.client.stopBrowser({ projectId, browserId: browser.id });
    return found;
  }

  expect(await useProfile(pods, "ana")).toBe("");
  const domains = async () => (await pods.client.getProfile({ projectId, profileId: profile.id })).cookieDomains;
  await eventually(async () => ((await domains()).length > 0 ? true : undefined));
  expect(await domains()).toEqual(["127.0.0.1"]);
  expect(await useProfile(pods, "bea")).toBe("sid=ana");
  // The state of a pod's browser (its cookies) starts a local browser, and a local one's state (its folder) a pod's.
  expect(await useProfile(local, "cy")).toBe("sid=bea");
  expect(await useProfile(pods)).toBe("sid=cy");
});
