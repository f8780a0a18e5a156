import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@bas/embedded-infra";
import { createTestInfra, type TestInfra } from "@bas/testing";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { guardFileUrls } from "../src/adapters/cdp/file-url-guard";
import { findProcessesByArgPrefix, processGroupOf } from "../src/adapters/local/proc-fs";
import { eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";
import { startTestSite, TEST_PAGE_TITLE } from "./support/test-site";

/**
 * Chromium's headless shell as every browser's Chromium (CHROMIUM_PATH=/usr/bin/chromium-headless-shell, which
 * `npm run setup` installs): lighter at rest, but it reads no policies and a resized window does not size new
 * pages. The pool makes up for both: file:// is refused by a guard of its own, and a warm browser serves only
 * requests of its own size.
 */
const SHELL = "/usr/bin/chromium-headless-shell";
const project = randomUUID();
/** Each round waits for a launch of the warm pool's, one after another on a slow machine. */
const LAUNCH_BOUND_MS = 120_000;

let infra: TestInfra;
let site: Awaited<ReturnType<typeof startTestSite>>;
let dataDir: string;
let h: PoolHarness;
/** The same node each time, on the same CDP port: the last test restarts it, and callers keep their cdpUrl. */
let env: Record<string, string>;
const start = () => startPoolHarness(env, { spareRefillDelayMs: 0 }, { infra, dataDir });

beforeAll(async () => {
  [infra, site] = await Promise.all([createTestInfra(), startTestSite()]);
  dataDir = mkdtempSync(join(tmpdir(), "bas-bp-shell-"));
  env = {
    CHROMIUM_PATH: SHELL,
    BROWSER_EGRESS_ALLOW: site.host,
    WARM_POOL_SIZE: "1",
    NODE_ID: `shell-${randomUUID()}`,
    CDP_PORT: String(await freePort()),
    // A restart adopts the browsers rather than stopping them.
    STOP_BROWSERS_ON_SHUTDOWN: "false",
  };
  h = await start();
}, 60_000);
afterAll(async () => {
  await h?.close();
  // What the last run left (STOP_BROWSERS_ON_SHUTDOWN=false): the node's browsers are ended with its processes.
  for (const { pid } of await findProcessesByArgPrefix(`--user-data-dir=${dataDir}/`)) {
    const group = await processGroupOf(pid);
    if (group) process.kill(-group, "SIGKILL");
  }
  await infra?.close();
  rmSync(dataDir, { recursive: true, force: true });
  await site?.close();
});

const create = (size?: { screenWidth: number; screenHeight: number }) =>
  h.client.createBrowser({
    projectId: project,
    settings: size ? { ...size, allowedDomains: [], record: false } : undefined,
    timeoutMinutes: 0,
    metadata: {},
  });

/** What a file:// URL shows in a page: its text, or the error that refused it. */
async function openFile(page: Page, url: string): Promise<string> {
  return page.goto(url, { timeout: 10_000 }).then(
    async () => page.evaluate(() => document.body?.textContent ?? ""),
    (err: Error) => err.message,
  );
}

/** Every file:// a tenant can try is refused; http pages load through the egress proxy and screencast. */
async function expectFileRefused(client: Browser) {
  const page = await client.newPage();
  expect(await openFile(page, "file:///etc/")).toMatch(/ERR_ACCESS_DENIED/);
  expect(await openFile(page, "file:///usr/share/")).toMatch(/ERR_ACCESS_DENIED/);

  // A tenant's own interception that lets everything through does not open it either.
  const own = await page.createCDPSession();
  own.on("Fetch.requestPaused", ({ requestId }) => void own.send("Fetch.continueRequest", { requestId }));
  await own.send("Fetch.enable", { patterns: [{ urlPattern: "*" }] });
  expect(await openFile(page, "file:///etc/hostname")).toMatch(/ERR_ACCESS_DENIED/);
  await own.send("Fetch.disable");

  // A new target opened at a file:// URL, in a browser context of its own too, lands on Chromium's error page.
  const browserSession = await client.target().createCDPSession();
  const { browserContextId } = await browserSession.send("Target.createBrowserContext", {});
  for (const context of [{}, { browserContextId }]) {
    const before = new Set(client.targets());
    await browserSession.send("Target.createTarget", { url: "file:///usr/", ...context });
    const target = await client.waitForTarget((t) => t.type() === "page" && !before.has(t));
    const opened = await target.page();
    const shown = () =>
      opened?.evaluate(() => [location.href, document.body?.textContent ?? ""]).catch(() => undefined);
    // The page is blank until the navigation is refused, and would list the folder if it were not.
    const [href, text] = await eventually(async () => {
      const now = await shown();
      return now && now[0] !== "about:blank" ? now : undefined;
    }, 10_000);
    expect(href).toBe("chrome-error://chromewebdata/");
    expect(text).not.toMatch(/share\//);
  }
  await browserSession.send("Target.disposeBrowserContext", { browserContextId });

  await page.goto(site.url);
  expect(await page.title()).toBe(TEST_PAGE_TITLE);
  // A frame comes, or the test times out.
  const frame = new Promise((resolve) => own.once("Page.screencastFrame", resolve));
  await own.send("Page.startScreencast", { format: "jpeg", quality: 50 });
  await frame;
  await page.close();
}

/** The one browser left once the others' tear-down is over: the warm pool's idle one. */
const onlyIdle = () =>
  eventually(async () => {
    const ids = await h.chromiumIds();
    return ids.length === 1 ? ids[0] : undefined;
  }, 15_000);

const geometry = (page: Page) =>
  page.evaluate(() => ({
    window: [window.screenX, window.screenY, window.outerWidth, window.outerHeight],
    screen: [screen.width, screen.height],
  }));

test("a tenant's browser refuses every file:// and still loads pages through its proxy and screencasts", async () => {
  await h.service.warmPoolFilled();
  const [warm] = await h.chromiumIds();
  const browser = await create();
  expect(browser.id).toBe(warm);
  const client = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
  try {
    await expectFileRefused(client);
  } finally {
    await client.disconnect();
    await h.client.stopBrowser({ projectId: project, browserId: browser.id });
  }
});

test(
  "a warm browser serves only its own window size: another size launches at that size, and the pool then keeps one of it",
  async () => {
    const small = { screenWidth: 1366, screenHeight: 768 };
    const pagesOf = async (cdpUrl: string) => {
      const client = await puppeteer.connect({ browserWSEndpoint: cdpUrl, defaultViewport: null });
      const shown = await geometry(await client.newPage());
      await client.disconnect();
      return shown;
    };
    await h.service.warmPoolFilled(LAUNCH_BOUND_MS);
    const defaultWarm = await onlyIdle();
    // The default size was asked for as often (by the test before): its browser stays, once.
    for (let round = 0; round < 2; round++) {
      const cold = await create(small);
      expect(cold.id).not.toBe(defaultWarm);
      expect(await pagesOf(cold.cdpUrl)).toEqual({ window: [0, 0, 1366, 768], screen: [1366, 768] });
      await h.client.stopBrowser({ projectId: project, browserId: cold.id });
      if (round === 0) expect(await onlyIdle()).toBe(defaultWarm);
    }

    // Asked for more often than the default size now, 1366x768 takes the idle browser's place.
    await h.service.warmPoolFilled(LAUNCH_BOUND_MS);
    const smallWarm = await onlyIdle();
    expect(smallWarm).not.toBe(defaultWarm);
    const warm = await create(small);
    expect(warm.id).toBe(smallWarm);
    expect(await pagesOf(warm.cdpUrl)).toEqual({ window: [0, 0, 1366, 768], screen: [1366, 768] });
    await h.client.stopBrowser({ projectId: project, browserId: warm.id });
  },
  LAUNCH_BOUND_MS * 2,
);

test("after browser-pool restarts, a browser it adopts refuses file:// again", async () => {
  const browser = await create();
  await h.close();
  h = await start();
  expect(await h.chromiumIds()).toContain(browser.id);
  const client = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
  try {
    await expectFileRefused(client);
  } finally {
    await client.disconnect();
    await h.client.stopBrowser({ projectId: project, browserId: browser.id });
  }
});

test("the guard is what refuses file://, and tells when its connection breaks but not when it is closed", async () => {
  const shell = await puppeteer.launch({ executablePath: SHELL, headless: "shell", args: ["--no-sandbox"] });
  try {
    const page = await shell.newPage();
    const lost: string[] = [];
    const first = await guardFileUrls(shell.wsEndpoint(), undefined, () => void lost.push("first"));
    expect(await openFile(page, "file:///etc/hostname")).toMatch(/ERR_ACCESS_DENIED/);
    first.close();
    expect(await openFile(page, "file:///etc/hostname")).not.toMatch(/ERR_ACCESS_DENIED/);

    await guardFileUrls(shell.wsEndpoint(), undefined, () => void lost.push("second"));
    // The whole group: the program at SHELL is a script that starts the binary.
    const pid = shell.process()?.pid;
    if (!pid) throw new Error("the shell has no process");
    process.kill(-pid, "SIGKILL");
    await eventually(async () => (lost.length > 0 ? true : undefined), 10_000);
    expect(lost).toEqual(["second"]);
  } finally {
    await shell.close().catch(() => undefined);
  }
});
