import { randomUUID } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { scrapeMetrics, sumOf } from "@bas/testing";
import { sql } from "kysely";
import { chromium } from "playwright-core";
import puppeteer from "puppeteer-core";
import WebSocket from "ws";
import { RELAYS_PER_BROWSER } from "../src/adapters/cdp/cdp-proxy";
import { commandLineOf, findProcessesByArgPrefix, processTree } from "../src/adapters/local/proc-fs";
import { RELAY_HOST_PROGRAM } from "../src/adapters/local/relay-program";
import { BROWSERS_TABLE } from "../src/adapters/pg/browsers-projection";
import { handshake } from "./support/cdp-handshake";
import { eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";
import { startTestSite, TEST_PAGE_TITLE } from "./support/test-site";

let h: PoolHarness;
let site: Awaited<ReturnType<typeof startTestSite>>;
const project = randomUUID();

beforeAll(async () => {
  site = await startTestSite();
  h = await startPoolHarness({ BROWSER_EGRESS_ALLOW: site.host });
});
afterAll(async () => {
  await h?.close();
  await site?.close();
});

const create = (projectId = project) =>
  h.client.createBrowser({ projectId, settings: undefined, timeoutMinutes: 0, metadata: {} });

const isPng = (data: Uint8Array) => Buffer.from(data.subarray(0, 8)).equals(Buffer.from("89504e470d0a1a0a", "hex"));

test("puppeteer connects with cdpUrl as is, opens a local page, reads its title and takes a screenshot", async () => {
  const browser = await create();
  expect(browser.status).toBe("active");
  expect(browser.cdpUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/cdp\/[0-9a-f-]{36}\/[A-Za-z0-9_-]{32}$/);
  const client = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
  const page = await client.newPage();
  await page.goto(site.url);
  expect(await page.title()).toBe(TEST_PAGE_TITLE);
  expect(isPng(await page.screenshot({ type: "png" }))).toBe(true);
  await client.disconnect();
});

test("playwright connectOverCDP with the http form of the URL reads /json/version through the proxy", async () => {
  const browser = await create();
  const httpUrl = browser.cdpUrl.replace(/^ws/, "http");
  const version = (await (await fetch(`${httpUrl}/json/version`)).json()) as Record<string, string>;
  expect(version.webSocketDebuggerUrl).toBe(browser.cdpUrl);
  expect(version.Browser).toMatch(/Chrome/);
  const client = await chromium.connectOverCDP(httpUrl);
  const page = await client.contexts()[0].newPage();
  await page.goto(site.url);
  expect(await page.title()).toBe(TEST_PAGE_TITLE);
  expect(isPng(await page.screenshot())).toBe(true);
  const list = (await (await fetch(`${httpUrl}/json/list`)).json()) as Array<Record<string, string>>;
  const listed = list.find((t) => t.url === site.url);
  expect(listed?.webSocketDebuggerUrl).toBe(`${browser.cdpUrl}/devtools/page/${listed?.id}`);
  expect(JSON.stringify(list)).not.toMatch(/devtoolsFrontendUrl/);
  await client.close();
});

test("several clients at once; a client hanging up leaves the browser and its tabs running", async () => {
  const browser = await create();
  const first = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
  const second = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
  const page = await first.newPage();
  await page.goto(`${site.url}second`);
  expect((await second.pages()).map((p) => p.url())).toContain(`${site.url}second`);
  await first.disconnect();
  await second.disconnect();

  const again = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
  const pages = await again.pages();
  const reopened = pages.find((p) => p.url() === `${site.url}second`);
  expect(reopened).toBeDefined();
  expect(await reopened!.title()).toBe("Second page");
  await again.disconnect();
  const read = await h.client.getBrowser({ projectId: project, browserId: browser.id });
  expect(read.status).toBe("active");
});

test("stop ends the Chromium processes, closes open clients and refuses new ones; stopping twice is fine", async () => {
  const browser = await create();
  expect(await h.chromiumIds()).toContain(browser.id);
  const client = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
  const disconnected = new Promise<void>((resolve) => client.once("disconnected", () => resolve()));

  const stopped = await h.client.stopBrowser({ projectId: project, browserId: browser.id });
  expect(stopped.status).toBe("stopped");
  expect(stopped.finishedAt).toBeInstanceOf(Date);
  expect(stopped.stopReason).toBe("caller");
  await disconnected;
  expect(await handshake(browser.cdpUrl)).toBe(404);
  await eventually(
    async () => ((await h.chromiumIds()).includes(browser.id) ? undefined : true),
    10_000,
    "Chromium gone",
  );

  const again = await h.client.stopBrowser({ projectId: project, browserId: browser.id });
  expect(again.status).toBe("stopped");
  expect(again.finishedAt).toEqual(stopped.finishedAt);
  const read = await h.client.getBrowser({ projectId: project, browserId: browser.id });
  expect(read).toMatchObject({ status: "stopped", stopReason: "caller", finishedAt: stopped.finishedAt });
});

test("a wrong or missing credential is refused, on the WebSocket and on /json/version", async () => {
  const browser = await create();
  const base = browser.cdpUrl.slice(0, browser.cdpUrl.lastIndexOf("/"));
  const wrong = `${base}/${"A".repeat(32)}`;
  expect(await handshake(wrong)).toBe(404);
  expect(await handshake(base)).toBe(404);
  expect((await fetch(`${wrong.replace(/^ws/, "http")}/json/version`)).status).toBe(404);
  expect((await fetch(`${base.replace(/^ws/, "http")}/json/version`)).status).toBe(404);
  expect(await handshake(browser.cdpUrl)).toBe("open");
});

test("the CDP proxy does not tell which browser ids exist: a wrong secret and an unknown id get the same answer", async () => {
  const browser = await create();
  const secret = browser.cdpUrl.slice(browser.cdpUrl.lastIndexOf("/") + 1);
  const known = browser.cdpUrl.replace(secret, "A".repeat(32)).replace(/^ws/, "http");
  const unknown = known.replace(browser.id, randomUUID());
  const [a, b] = await Promise.all([fetch(`${known}/json/version`), fetch(`${unknown}/json/version`)]);
  expect([a.status, await a.text()]).toEqual([b.status, await b.text()]);
  expect(await handshake(known.replace(/^http/, "ws"))).toBe(await handshake(unknown.replace(/^http/, "ws")));
});

test("another project's browser is NOT_FOUND, and its stop call changes nothing", async () => {
  const browser = await create();
  const other = randomUUID();
  await expect(h.client.getBrowser({ projectId: other, browserId: browser.id })).rejects.toMatchObject({
    code: 5,
    kind: "not_found",
  });
  await expect(h.client.stopBrowser({ projectId: other, browserId: browser.id })).rejects.toMatchObject({ code: 5 });
  const list = await h.client.listBrowsers({ projectId: other, pageNumber: 1, pageSize: 10 });
  expect(list.items).toEqual([]);
  expect((await h.client.getBrowser({ projectId: project, browserId: browser.id })).status).toBe("active");
});

test("as root, a caller's connection is carried by a relay in the browser's own network, as the browser's user, not by browser-pool", async () => {
  const browser = await create();
  expect(await relaysOfThisProcess()).toEqual([]);
  const client = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
  const page = await client.newPage();
  await page.goto(site.url);
  expect(await page.title()).toBe(TEST_PAGE_TITLE);

  const relays = await relaysOfThisProcess();
  if (process.getuid?.() !== 0) {
    // Not root: bubblewrap's network cannot be entered (see sandbox-relay.ts), so the proxy relays itself.
    expect(relays).toEqual([]);
    return void (await client.disconnect());
  }
  const [relay, ...more] = relays;
  expect(more).toEqual([]);
  const [chromium] = await browserProcess(browser.id);
  // Forked by browser-pool's relay host (root, beside it), which starts no program for a caller.
  const host = Number(field(readFileSync(`/proc/${relay}/status`, "utf8"), "PPid"));
  expect(Number(field(readFileSync(`/proc/${host}/status`, "utf8"), "PPid"))).toBe(process.pid);
  expect(await commandLineOf(host)).toEqual(await commandLineOf(relay));
  // The browser's network, not the host's: the relay reaches nothing but the browser's loopback.
  expect(namespace(relay, "net")).toBe(namespace(chromium, "net"));
  expect(namespace(relay, "net")).not.toBe(namespace(process.pid, "net"));
  const status = readFileSync(`/proc/${relay}/status`, "utf8");
  const browserUid = field(readFileSync(`/proc/${chromium}/status`, "utf8"), "Uid").split(/\s+/)[0];
  expect(Number(browserUid)).toBeGreaterThan(0);
  expect(field(status, "Uid").split(/\s+/)).toEqual([browserUid, browserUid, browserUid, browserUid]);
  expect(field(status, "Gid").split(/\s+/)).toEqual([browserUid, browserUid, browserUid, browserUid]);
  expect(field(status, "Groups")).toBe(browserUid);
  expect(field(status, "CapEff")).toBe("0000000000000000");

  await client.disconnect();
  await eventually(
    async () => ((await relaysOfThisProcess()).length === 0 ? true : undefined),
    5_000,
    "the relay ended",
  );
  expect((await h.client.getBrowser({ projectId: project, browserId: browser.id })).status).toBe("active");
});

test("what relays carry is counted: in the metrics while open and at their end, and in the stop's record", async () => {
  const browser = await create();
  // Connections of earlier tests are counted once their relays have ended.
  const before = await eventually(async () => {
    const figures = await cdpBytes();
    return figures.connections === 0 ? figures : undefined;
  });
  const first = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
  const page = await first.newPage();
  // 300 kB to the browser, 200 kB back.
  expect(await page.evaluate((sent) => sent.length, "a".repeat(300_000))).toBe(300_000);
  expect((await page.evaluate(() => "b".repeat(200_000))).length).toBe(200_000);
  const open = await cdpBytes();
  expect(open.toBrowser - before.toBrowser).toBeGreaterThan(300_000);
  expect(open.toClient - before.toClient).toBeGreaterThan(200_000);
  expect(open.connections).toBe(1);

  // Counted again at its end: the metrics keep the same figures, nothing counted twice.
  await first.disconnect();
  const ended = await eventually(async () => {
    const figures = await cdpBytes();
    return figures.connections === 0 ? figures : undefined;
  });
  expect(ended.toBrowser - open.toBrowser).toBeLessThan(10_000);
  expect(ended.toClient - open.toClient).toBeLessThan(10_000);

  // A second caller still connected at the stop is cut off; what the first carried is in the stop's record.
  const second = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
  const disconnected = new Promise<void>((resolve) => second.once("disconnected", () => resolve()));
  await h.client.stopBrowser({ projectId: project, browserId: browser.id });
  await disconnected;
  const row = await eventually(async () => {
    const { rows } = await sql<{ cdp_bytes_in: string; cdp_bytes_out: string }>`
      select cdp_bytes_in, cdp_bytes_out from ${sql.table(BROWSERS_TABLE)}
      where id = ${browser.id} and status = 'stopped'`.execute(h.infra.db);
    return rows[0];
  });
  expect(Number(row.cdp_bytes_in)).toBe(ended.toBrowser - before.toBrowser);
  expect(Number(row.cdp_bytes_out)).toBe(ended.toClient - before.toClient);
  await eventually(
    async () => ((await relaysOfThisProcess()).length === 0 ? true : undefined),
    5_000,
    "the relays ended",
  );
});

test(`beyond ${RELAYS_PER_BROWSER} relays at once, a browser's callers are carried by browser-pool itself`, async () => {
  const browser = await create();
  const clients = await Promise.all(Array.from({ length: RELAYS_PER_BROWSER + 2 }, () => openClient(browser.cdpUrl)));
  for (const client of clients) expect((await client.ask("Browser.getVersion")).product).toMatch(/Chrome/);
  expect(await relaysOfThisProcess()).toHaveLength(process.getuid?.() === 0 ? RELAYS_PER_BROWSER : 0);
  for (const client of clients) client.ws.close();
  await eventually(
    async () => ((await relaysOfThisProcess()).length === 0 ? true : undefined),
    10_000,
    "the relays ended",
  );
});

/** A bare CDP client: one WebSocket, one question at a time. */
async function openClient(url: string) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  let id = 0;
  return {
    ws,
    ask(method: string): Promise<any> {
      const asked = ++id;
      ws.send(JSON.stringify({ id: asked, method }));
      return new Promise((resolve) =>
        ws.on("message", (data) => {
          const answer = JSON.parse(String(data));
          if (answer.id === asked) resolve(answer.result);
        }),
      );
    },
  };
}

async function cdpBytes() {
  const samples = await scrapeMetrics(h.service.metricsPort);
  const node = { node: h.service.nodeId };
  const figure = (name: string, labels = {}) => sumOf(samples, name, { ...node, ...labels }) ?? 0;
  return {
    toBrowser: figure("bas_browser_pool_cdp_bytes_total", { direction: "to_browser" }),
    toClient: figure("bas_browser_pool_cdp_bytes_total", { direction: "to_client" }),
    connections: figure("bas_browser_pool_cdp_connections"),
  };
}

/** Chromium's browser process (its renderers have namespaces of their own, from Chromium's sandbox). */
async function browserProcess(browserId: string): Promise<number[]> {
  const found = await findProcessesByArgPrefix(`--user-data-dir=${h.dataDir}/${browserId}`);
  const browsers: number[] = [];
  for (const { pid } of found) {
    const args = (await commandLineOf(pid)) ?? [];
    if (args[0].endsWith("/chromium") && !args.some((arg) => arg.startsWith("--type="))) browsers.push(pid);
  }
  return browsers;
}

/**
 * The relays carrying callers for browser-pool (running in this test's process): processes its relay host forked
 * that have become a browser's user.
 */
async function relaysOfThisProcess(): Promise<number[]> {
  const relays: number[] = [];
  for (const pid of await processTree(process.pid)) {
    const [program, flag, script] = (await commandLineOf(pid)) ?? [];
    if (program !== "perl" || flag !== "-e" || script !== RELAY_HOST_PROGRAM) continue;
    if (field(readFileSync(`/proc/${pid}/status`, "utf8"), "Uid").split(/\s+/)[0] !== "0") relays.push(pid);
  }
  return relays;
}

const namespace = (pid: number, kind: string) => readlinkSync(`/proc/${pid}/ns/${kind}`);
const field = (status: string, name: string) => new RegExp(`^${name}:[ \\t]*(.*)$`, "m").exec(status)?.[1].trim() ?? "";
