import { randomUUID } from "node:crypto";
import puppeteer from "puppeteer-core";
import { eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";
import { startTestSite, TEST_PAGE_TITLE } from "./support/test-site";
import { usageMessages } from "./support/usage-stream";

/**
 * Proxies by country: PROXY_UPSTREAM_URL names an upstream proxy (a commercial provider's form, the country in the
 * user name); here it is a second proxy of the test's own that records who came through and how many bytes.
 */
let h: PoolHarness;
let site: Awaited<ReturnType<typeof startTestSite>>;
let upstream: Awaited<ReturnType<typeof startUpstream>>;
const upstreamUsers: string[] = [];
const project = randomUUID();

beforeAll(async () => {
  site = await startTestSite();
  upstream = await startUpstream();
  h = await startPoolHarness({
    BROWSER_EGRESS_ALLOW: site.host,
    PROXY_UPSTREAM_URL: `http://country-{country}:secret@127.0.0.1:${upstream.port}`,
    USAGE_INTERVAL_MS: "300",
  });
}, 60_000);

/** The upstream proxy: who came through, and every byte from our proxy (open connections included). */
async function startUpstream() {
  const { Server } = await import("proxy-chain");
  const server = new Server({
    port: 0,
    host: "127.0.0.1",
    prepareRequestFunction: ({ username }) => {
      upstreamUsers.push(username);
      return {};
    },
  });
  let closedBytes = 0;
  server.on("connectionClosed", ({ stats }: { stats?: { srcTxBytes: number; srcRxBytes: number } }) => {
    if (stats) closedBytes += stats.srcTxBytes + stats.srcRxBytes;
  });
  await server.listen();
  return {
    port: server.port,
    bytes: () =>
      server
        .getConnectionIds()
        .reduce(
          (sum, id) =>
            sum + (server.getConnectionStats(id)?.srcTxBytes ?? 0) + (server.getConnectionStats(id)?.srcRxBytes ?? 0),
          closedBytes,
        ),
    close: () => server.close(true),
  };
}

afterAll(async () => {
  await h?.close();
  await upstream?.close();
  await site?.close();
});

/** Opens the test site's two pages in a new browser of `country`, then stops it; its metered proxy bytes. */
async function browse(country: string | undefined) {
  const created = await h.client.createBrowser({
    projectId: project,
    settings: { proxyCountryCode: country, record: false },
    timeoutMinutes: 0,
    metadata: {},
  });
  const client = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl, defaultViewport: null });
  const page = await client.newPage();
  await page.goto(site.url);
  expect(await page.title()).toBe(TEST_PAGE_TITLE);
  await page.goto(`${site.url}second`);
  await client.disconnect();
  await h.client.stopBrowser({ projectId: project, browserId: created.id });
  // The stop's last report is published after the answer: wait for it.
  const reports = await eventually(async () => {
    const mine = (await usageMessages(h.infra)).filter((m) => m.usage.browserId === created.id);
    return mine.some((m) => m.usage.lastReport) ? mine : undefined;
  });
  return reports.reduce((sum, m) => sum + (m.usage.proxy?.bytes ?? 0), 0);
}

test("pages of a browser with a country go through the country's upstream proxy, and what is metered is what it carried", async () => {
  const metered = await browse("de");
  expect(new Set(upstreamUsers)).toEqual(new Set(["country-de"]));
  const upstreamBytes = upstream.bytes();
  // The same requests and answers cross both hops; what differs is each request's proxy headers, either way (the
  // browser's absolute-form request line and proxy headers against ours to the upstream): under 1 KiB a request.
  expect(Math.abs(metered - upstreamBytes)).toBeLessThan(upstreamUsers.length * 1_024);
  expect(metered).toBeGreaterThan(2_000);
});

test("proxyCountryCode null: no proxy, nothing through the upstream, no proxy bytes metered", async () => {
  const before = upstreamUsers.length;
  expect(await browse(undefined)).toBe(0);
  expect(upstreamUsers.length).toBe(before);
});

test("an upstream proxy that is down is a clear answer at once, not a hang", async () => {
  await upstream.close();
  const created = await h.client.createBrowser({
    projectId: project,
    settings: { proxyCountryCode: "fr", record: false },
    timeoutMinutes: 0,
    metadata: {},
  });
  const client = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl, defaultViewport: null });
  const page = await client.newPage();
  const started = Date.now();
  const response = await page.goto(site.url, { timeout: 20_000 });
  expect(Date.now() - started).toBeLessThan(10_000);
  expect({ status: response?.status(), text: response?.statusText() }).toEqual({
    status: 594,
    text: "Connection Refused",
  });
  await client.disconnect();
  await h.client.stopBrowser({ projectId: project, browserId: created.id });
}, 60_000);
