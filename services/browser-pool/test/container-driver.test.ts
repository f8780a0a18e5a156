import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@bas/embedded-infra";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { type ContainerEngine, startContainerEngine } from "./support/container-engine";
import { eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";
import { startTestSite, TEST_PAGE_TITLE } from "./support/test-site";
import { uploadProbe } from "./support/upload-probe";

/**
 * browser-pool with BROWSER_DRIVER=container, against a real engine (Podman's API here) and the real browser image:
 * every browser a container of bas/chromium. A tenant holding a cdpUrl may do anything CDP allows; as with the local
 * driver, nothing it does reaches the host's files, loopback or private addresses, or another tenant's browser, and
 * its container is held to its memory and process caps.
 */
let engine: ContainerEngine;
let h: PoolHarness;
let site: Awaited<ReturnType<typeof startTestSite>>;
let hostOnly: Server;
let hostOnlyPort: number;
const hostOnlyRequests: string[] = [];
let secretsDir: string;
let tenant: Browser;
let page: Page;
let browserId: string;
const project = randomUUID();
const SECRET = `secret-${randomUUID()}`;

beforeAll(async () => {
  // A first run on a fresh machine builds the image (a few minutes); the engine keeps it for every later run.
  engine = await startContainerEngine((line) => console.log(`container-driver test: ${line}`));
  site = await startTestSite();
  hostOnly = createServer((req, res) => {
    hostOnlyRequests.push(req.url ?? "");
    res.end(SECRET);
  });
  await new Promise<void>((resolve) => hostOnly.listen(0, "127.0.0.1", resolve));
  hostOnlyPort = (hostOnly.address() as { port: number }).port;
  secretsDir = mkdtempSync(join(tmpdir(), "bas-container-secrets-"));
  writeFileSync(join(secretsDir, "secrets.json"), SECRET, { mode: 0o600 });
  h = await startPoolHarness(containerEnv());
  const created = await createBrowser();
  browserId = created.id;
  tenant = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl, defaultViewport: null });
  page = await tenant.newPage();
}, 900_000);

afterAll(async () => {
  await tenant?.disconnect();
  await h?.close();
  // Whatever a failed test left behind (a node closed with STOP_BROWSERS_ON_SHUTDOWN=false keeps its containers).
  if (h) {
    const left = await engine.exec(["ps", "-aq", "--filter", `label=io.bas.deployment=${h.infra.namespace}`]);
    if (left.trim()) await engine.exec(["rm", "-f", ...left.trim().split("\n")]);
  }
  await engine?.close();
  await site?.close();
  hostOnly?.closeAllConnections();
  await new Promise<void>((resolve) => (hostOnly ? hostOnly.close(() => resolve()) : resolve()));
  if (secretsDir) rmSync(secretsDir, { recursive: true, force: true });
});

const containerEnv = (overrides: Record<string, string> = {}) => ({
  BROWSER_DRIVER: "container",
  CONTAINER_ENGINE_SOCKET: engine.socket,
  CONTAINER_BROWSER_IMAGE: engine.browserImage,
  CONTAINER_BROWSER_MEMORY_MB: "768",
  CONTAINER_BROWSER_PIDS: "600",
  BROWSER_EGRESS_ALLOW: site.host,
  ...overrides,
});

const createBrowser = (projectId = project, pool = h) =>
  pool.client.createBrowser({ projectId, settings: undefined, timeoutMinutes: 0, metadata: {} });

/** The engine's ids of the containers of this browser (none once it is gone). */
const containersOf = async (id: string) =>
  (await engine.exec(["ps", "--all", "--quiet", "--filter", `label=io.bas.browser-id=${id}`]))
    .split("\n")
    .filter(Boolean);

const inspect = async (containerId: string) => JSON.parse(await engine.exec(["inspect", containerId]))[0];

/** Runs a shell command inside the browser's container, as its user. */
const inContainer = async (containerId: string, script: string) =>
  (await engine.exec(["exec", containerId, "sh", "-c", script])).trim();

/** Navigates and returns what the page shows, or the navigation error. */
async function open(url: string): Promise<{ status?: number; text: string }> {
  try {
    const response = await page.goto(url, { timeout: 15_000 });
    return { status: response?.status(), text: await page.evaluate(() => document.body?.textContent ?? "") };
  } catch (err) {
    return { text: (err as Error).message };
  }
}

test("each browser is a container of the browser image, reached through its cdpUrl; an allowed site loads", async () => {
  const [containerId] = await containersOf(browserId);
  expect(containerId).toBeTruthy();
  const info = await inspect(containerId);
  expect(info.State.Running).toBe(true);
  expect(info.ImageName ?? info.Config.Image).toBe(engine.browserImage);
  await page.goto(site.url);
  expect(await page.title()).toBe(TEST_PAGE_TITLE);
});

test("the container has no network but its loopback, no capabilities, a read-only root and the image's user", async () => {
  const [containerId] = await containersOf(browserId);
  const info = await inspect(containerId);
  expect(info.HostConfig.NetworkMode).toBe("none");
  expect(info.HostConfig.ReadonlyRootfs).toBe(true);
  expect(info.Config.User).toBe("1000:1000");
  // What the processes inside have, as the kernel says: no interface but lo, no capability, uid 1000.
  const interfaces = await inContainer(containerId, "tail -n +3 /proc/net/dev | cut -d: -f1");
  expect(interfaces.split("\n").map((s) => s.trim())).toEqual(["lo"]);
  expect(await inContainer(containerId, "grep -E '^(CapEff|CapBnd|Uid)' /proc/self/status")).toMatch(
    /^Uid:\s+1000\s+1000\s+1000\s+1000\nCapEff:\s+0+\nCapBnd:\s+0+$/,
  );
  await expect(inContainer(containerId, "touch /usr/bin/x")).rejects.toThrow(/Read-only file system/);
});

test("the container is held to its memory and process caps (CONTAINER_BROWSER_MEMORY_MB, CONTAINER_BROWSER_PIDS)", async () => {
  const [containerId] = await containersOf(browserId);
  const info = await inspect(containerId);
  expect(info.HostConfig.Memory).toBe(768 * 1024 * 1024);
  expect(info.HostConfig.PidsLimit).toBe(600);
  // The cgroup the kernel enforces, as seen from inside (cgroup v2, or v1's controllers).
  const memory = await inContainer(
    containerId,
    "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes",
  );
  expect(Number(memory)).toBe(768 * 1024 * 1024);
  const pids = await inContainer(
    containerId,
    "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max",
  );
  expect(Number(pids)).toBe(600);
});

test("file:// is refused, and the host's files are not there even through a file upload", async () => {
  for (const url of ["file:///etc/passwd", `file://${join(secretsDir, "secrets.json")}`]) {
    expect((await open(url)).text).toMatch(/ERR_BLOCKED_BY_ADMINISTRATOR/);
  }
  const upload = await uploadProbe(tenant, site.url);
  expect(await upload.read(join(secretsDir, "secrets.json"))).toMatch(/^(no file|unreadable: \w+)$/);
  // The container's /etc is the image's, not the host's.
  expect(await upload.read("/etc/passwd")).not.toBe(readFileSync("/etc/passwd", "utf8"));
  await upload.close();
});

test.each([
  ["a loopback address", () => `http://127.0.0.1:${hostOnlyPort}/`, /loopback/],
  ["localhost", () => `http://localhost:${hostOnlyPort}/`, /loopback/],
  ["a redirect to loopback from an allowed site", () => `${site.url}redirect?to=127.0.0.1:${hostOnlyPort}`, /loopback/],
  ["a private address", () => "http://10.11.12.13/", /private/],
  ["the cloud metadata address", () => "http://169.254.169.254/latest/meta-data/", /link-local/],
  ["the DevTools port inside the container", () => "http://127.0.0.1:9221/json/list", /loopback/],
])("%s is refused with the reason, and nothing reaches it", async (_what, url, reason) => {
  const before = hostOnlyRequests.length;
  const result = await open(url());
  expect(result.status).toBe(403);
  expect(result.text).toMatch(/Blocked by the browser egress policy/);
  expect(result.text).toMatch(reason);
  expect(result.text).not.toContain(SECRET);
  expect(hostOnlyRequests.length).toBe(before);
});

test("another tenant's browser is out of reach: its container sees only its own sockets and profile", async () => {
  const other = await createBrowser(randomUUID());
  const [mine] = await containersOf(browserId);
  const [theirs] = await containersOf(other.id);
  const theirProfile = (await inspect(theirs)).Config.Env.find((e: string) => e.startsWith("USER_DATA_DIR="))!;
  expect(await inContainer(mine, "ls /sockets")).toBe("devtools.sock\negress.sock");
  await expect(inContainer(mine, `ls ${theirProfile.split("=")[1]}`)).rejects.toThrow(/No such file or directory/);
  await h.client.stopBrowser({ projectId: other.projectId, browserId: other.id });
});

test("a stopped browser's container and folders are gone; one that dies is recorded as crashed", async () => {
  const created = await createBrowser();
  const [containerId] = await containersOf(created.id);
  const profile = join(h.dataDir, created.id);
  expect(existsSync(profile)).toBe(true);
  expect(containerId).toBeTruthy();
  await h.client.stopBrowser({ projectId: project, browserId: created.id });
  // The stop is answered once recorded; the container and folders go right after (as a local browser's processes).
  await eventually(
    async () => ((await containersOf(created.id)).length === 0 && !existsSync(profile) ? true : undefined),
    20_000,
    "its container and profile removed",
  );

  const dying = await createBrowser();
  await engine.exec(["kill", (await containersOf(dying.id))[0]]);
  const stopped = await eventually(
    async () => {
      const b = await h.client.getBrowser({ projectId: project, browserId: dying.id });
      return b.status === "stopped" ? b : undefined;
    },
    20_000,
    "the dead browser recorded stopped",
  );
  expect(stopped.stopReason).toBe("crash");
  await eventually(
    async () => ((await containersOf(dying.id)).length === 0 ? true : undefined),
    20_000,
    "its container removed",
  );
});

test("a restarted node adopts its running containers, on their old cdpUrl, and removes the ones nobody owns", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "bas-bp-containers-"));
  const env = containerEnv({ STOP_BROWSERS_ON_SHUTDOWN: "false", CDP_PORT: String(await freePort()) });
  const first = await startPoolHarness(env, {}, { infra: h.infra, dataDir });
  const kept = await createBrowser(project, first);
  await first.close();
  // A container of this node's that no event records (its launch was cut short by a crash).
  const orphanId = randomUUID();
  await engine.exec([
    "create",
    ...["--label", "io.bas.managed-by=bas-browser-pool", "--label", `io.bas.node=${first.env.NODE_ID}`],
    ...["--label", `io.bas.deployment=${first.env.NAMESPACE}`, "--label", `io.bas.browser-id=${orphanId}`],
    engine.browserImage,
  ]);
  expect(await containersOf(orphanId)).toHaveLength(1);

  const second = await startPoolHarness({ ...env, NODE_ID: first.env.NODE_ID }, {}, { infra: h.infra, dataDir });
  try {
    expect(await containersOf(orphanId)).toEqual([]);
    const again = await puppeteer.connect({ browserWSEndpoint: kept.cdpUrl, defaultViewport: null });
    const tab = await again.newPage();
    await tab.goto(site.url);
    expect(await tab.title()).toBe(TEST_PAGE_TITLE);
    await again.disconnect();
    await second.client.stopBrowser({ projectId: project, browserId: kept.id });
    await eventually(async () => ((await containersOf(kept.id)).length === 0 ? true : undefined), 20_000, "removed");
  } finally {
    await second.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("an engine that does not answer, or a missing image, stops the start with what to do", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "bas-bp-containers-"));
  const shared = { infra: h.infra, dataDir };
  try {
    await expect(
      startPoolHarness(containerEnv({ CONTAINER_ENGINE_SOCKET: join(dataDir, "none.sock") }), {}, shared),
    ).rejects.toThrow(/container engine's API does not answer at .*none\.sock.*set CONTAINER_ENGINE_SOCKET/);
    await expect(
      startPoolHarness(containerEnv({ CONTAINER_BROWSER_IMAGE: "localhost/bas/no-such-image:0" }), {}, shared),
    ).rejects.toThrow(/localhost\/bas\/no-such-image:0 is not in the container engine: build it \(npm run images\)/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
