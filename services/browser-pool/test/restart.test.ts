import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitForExit } from "@bas/embedded-infra";
import { browserPool } from "@bas/proto";
import { checkGrpcHealth, connectClient } from "@bas/service-kit";
import { createTestInfra, type TestInfra } from "@bas/testing";
import puppeteer from "puppeteer-core";
import { findProcessesByArgPrefix, processGroupOf } from "../src/adapters/local/proc-fs";
import { chromiumIdsIn, eventually, type PoolClient, testEnv } from "./support/pool-harness";
import { startUpstreamProxy, type UpstreamProxy } from "../../../test/support/upstream-proxy";
import { startTestSite, TEST_PAGE_TITLE } from "./support/test-site";

const MAIN = join(__dirname, "..", "src", "main.ts");

let infra: TestInfra;
let site: Awaited<ReturnType<typeof startTestSite>>;
let dataDir: string;
let child: ChildProcess | undefined;
let client: PoolClient | undefined;
/** Callers' own proxies: one open, one that wants a password. */
let openProxy: UpstreamProxy;
let lockedProxy: UpstreamProxy;

beforeAll(async () => {
  [infra, site, openProxy, lockedProxy] = await Promise.all([
    createTestInfra(),
    startTestSite(),
    startUpstreamProxy(),
    startUpstreamProxy({ username: "alice", password: "s3cret" }),
  ]);
  dataDir = mkdtempSync(join(tmpdir(), "bas-bp-restart-"));
});
afterAll(async () => {
  client?.close();
  if (child && child.exitCode === null) {
    child.kill("SIGTERM");
    await waitForExit(child, 20_000);
  }
  // Whatever a failed assertion left behind.
  for (const { pid } of await findProcessesByArgPrefix(`--user-data-dir=${dataDir}/`)) {
    const group = await processGroupOf(pid);
    if (group) process.kill(-group, "SIGKILL");
  }
  rmSync(dataDir, { recursive: true, force: true });
  await site?.close();
  await openProxy?.close();
  await lockedProxy?.close();
  await infra?.close();
});

/** The service as its own OS process (one process: node with the tsx loader), so it can be SIGKILLed. */
async function startProcess(env: Record<string, string>, grpcPort: number): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ["--import", "tsx", MAIN], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  await eventually(
    async () => {
      if (proc.exitCode !== null) throw new Error(`browser-pool exited with ${proc.exitCode}`);
      return (await checkGrpcHealth(`127.0.0.1:${grpcPort}`, 500)) ? true : undefined;
    },
    60_000,
    "browser-pool serving",
  );
  return proc;
}

test("killed with SIGKILL while browsers run, then restarted: live browsers adopted, dead ones stopped, no orphan Chromium; a browser whose custom proxy had credentials is stopped, not let out another way; allowedDomains still hold after adoption", async () => {
  const [grpcPort, cdpPort] = await Promise.all([freePort(), freePort()]);
  const env = testEnv(infra, dataDir, {
    GRPC_PORT: String(grpcPort),
    CDP_PORT: String(cdpPort),
    NODE_ID: "restart-node",
    LOG_LEVEL: "warn",
    WARM_POOL_SIZE: "1",
    BROWSER_EGRESS_ALLOW: [site.host, `127.0.0.1:${openProxy.port}`, `127.0.0.1:${lockedProxy.port}`].join(","),
  });
  const project = randomUUID();
  child = await startProcess(env, grpcPort);
  client = connectClient(browserPool.BrowserPoolClient, `127.0.0.1:${grpcPort}`);
  const create = (customProxy?: { port: number; username?: string; password?: string }) =>
    client!.createBrowser({
      projectId: project,
      settings: customProxy && {
        allowedDomains: [],
        record: false,
        customProxy: { host: "127.0.0.1", ignoreCertErrors: false, ...customProxy },
      },
      timeoutMinutes: 0,
      metadata: {},
    });
  const a = await create();
  // Limited to a host the test site is not: adopted, it must still be refused there.
  const b = await client.createBrowser({
    projectId: project,
    settings: { allowedDomains: ["allowed.test"], record: false },
    timeoutMinutes: 0,
    metadata: {},
  });
  const c = await create();
  const proxied = await create({ port: openProxy.port });
  const locked = await create({ port: lockedProxy.port, username: "alice", password: "s3cret" });
  const puppet = await puppeteer.connect({ browserWSEndpoint: a.cdpUrl, defaultViewport: null });
  await (await puppet.newPage()).goto(site.url);
  await puppet.disconnect();
  // Five browsers for callers and one idle warm browser.
  const before = await eventually(async () => {
    const ids = await chromiumIdsIn(dataDir);
    return ids.length === 6 ? ids : undefined;
  });
  const warm = before.find((id) => ![a.id, b.id, c.id, proxied.id, locked.id].includes(id))!;

  child.kill("SIGKILL");
  await waitForExit(child, 10_000);
  client.close();
  // While the service is down, one browser dies.
  const [cProcess] = await findProcessesByArgPrefix(`--user-data-dir=${dataDir}/${c.id}`);
  process.kill(-(await processGroupOf(cProcess.pid))!, "SIGKILL");
  // Left running: a, b, the idle warm browser (and a refill the pool may have been launching when it was killed).
  // The processes of c's sandbox end as the kernel tears down its PID namespace, a moment after the signal.
  const survivors = await eventually(async () => {
    const ids = await chromiumIdsIn(dataDir);
    return ids.includes(c.id) ? undefined : ids;
  });
  expect(survivors).toEqual(expect.arrayContaining([a.id, b.id, proxied.id, locked.id, warm]));

  child = await startProcess({ ...env, WARM_POOL_SIZE: "0" }, grpcPort);
  client = connectClient(browserPool.BrowserPoolClient, `127.0.0.1:${grpcPort}`);

  const list = await client.listBrowsers({ projectId: project, pageNumber: 1, pageSize: 10 });
  const status = Object.fromEntries(list.items.map((x) => [x.id, [x.status, x.stopReason]]));
  expect(status).toEqual({
    [a.id]: ["active", undefined],
    [b.id]: ["active", undefined],
    [c.id]: ["stopped", "crash"],
    [proxied.id]: ["active", undefined],
    // Its proxy's password was in the old process's memory only.
    [locked.id]: ["stopped", "crash"],
  });
  // The idle warm browser had no owner: reaped. Every Chromium left is an active browser, and vice versa.
  expect((await chromiumIdsIn(dataDir)).sort()).toEqual([a.id, b.id, proxied.id].sort());

  // The adopted browser behind an open custom proxy still goes out through it.
  const seen = openProxy.users.length;
  const viaProxy = await puppeteer.connect({ browserWSEndpoint: proxied.cdpUrl, defaultViewport: null });
  await (await viaProxy.newPage()).goto(site.url);
  await viaProxy.disconnect();
  expect(openProxy.users.length).toBeGreaterThan(seen);

  // The adopted browser's proxy is started again with its recorded allowedDomains.
  const limited = await puppeteer.connect({ browserWSEndpoint: b.cdpUrl, defaultViewport: null });
  const refused = await (await limited.newPage()).goto(site.url);
  expect(refused?.status()).toBe(403);
  expect(refused?.headers()["x-egress-blocked"]).toBe(
    "Blocked by the browser's allowedDomains: 127.0.0.1 is not allowed.test or one of its subdomains",
  );
  await limited.disconnect();

  // The adopted browser answers on its old cdpUrl, with its tab still open.
  const again = await puppeteer.connect({ browserWSEndpoint: a.cdpUrl, defaultViewport: null });
  const tab = (await again.pages()).find((p) => p.url() === site.url);
  expect(await tab?.title()).toBe(TEST_PAGE_TITLE);
  const closed = new Promise<void>((resolve) => again.once("disconnected", () => resolve()));
  await client.stopBrowser({ projectId: project, browserId: a.id });
  await closed;

  // SIGTERM: the service stops the browsers it still has (STOP_BROWSERS_ON_SHUTDOWN defaults to true).
  child.kill("SIGTERM");
  await waitForExit(child, 20_000);
  expect(await chromiumIdsIn(dataDir)).toEqual([]);
});
