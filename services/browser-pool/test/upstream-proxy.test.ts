import { randomUUID } from "node:crypto";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { sessions } from "@bas/proto";
import { storedText } from "@bas/testing";
import puppeteer from "puppeteer-core";
import { generate as selfSignedCertificate } from "selfsigned";
import { eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";
import { startUpstreamProxy, type UpstreamProxy } from "../../../test/support/upstream-proxy";
import { startTestSite, TEST_PAGE_TITLE } from "./support/test-site";
import { usageMessages } from "./support/usage-stream";

/**
 * Proxies by country: PROXY_UPSTREAM_URL names an upstream proxy (a commercial provider's form, the country in the
 * user name); here it is a second proxy of the test's own that records who came through and how many bytes.
 */
let h: PoolHarness;
let site: Awaited<ReturnType<typeof startTestSite>>;
let upstream: UpstreamProxy;
/** A caller's own proxy (customProxy), which wants credentials. */
let custom: UpstreamProxy;
/** An HTTPS site whose certificate no browser trusts, as behind a proxy that inspects TLS. */
let untrusted: Awaited<ReturnType<typeof startUntrustedSite>>;
const project = randomUUID();
const CUSTOM_PASSWORD = `pw-${randomUUID()}`;

beforeAll(async () => {
  site = await startTestSite();
  upstream = await startUpstreamProxy();
  custom = await startUpstreamProxy({ username: "alice", password: CUSTOM_PASSWORD });
  untrusted = await startUntrustedSite();
  h = await startPoolHarness({
    // The caller's proxy is a destination like any other: open only because the test opens it.
    BROWSER_EGRESS_ALLOW: `${site.host},127.0.0.1:${custom.port},${untrusted.host}`,
    PROXY_UPSTREAM_URL: `http://country-{country}:secret@127.0.0.1:${upstream.port}`,
    USAGE_INTERVAL_MS: "300",
  });
}, 60_000);

async function startUntrustedSite() {
  const { private: key, cert } = await selfSignedCertificate([{ name: "commonName", value: "127.0.0.1" }]);
  const server = createHttpsServer({ key, cert }, (_req, res) => {
    res.setHeader("content-type", "text/html");
    res.end("<title>Inspected</title>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

afterAll(async () => {
  await h?.close();
  await upstream?.close();
  await custom?.close();
  await untrusted?.close();
  await site?.close();
});

/** Opens the test site's two pages in a new browser of `country`, then stops it; its metered proxy bytes. */
async function browse(country: string | undefined, customProxy?: sessions.CustomProxy) {
  const created = await h.client.createBrowser({
    projectId: project,
    settings: { proxyCountryCode: country, allowedDomains: [], record: false, customProxy },
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
  expect(new Set(upstream.users)).toEqual(new Set(["country-de"]));
  const upstreamBytes = upstream.bytes();
  // The same requests and answers cross both hops; what differs is each request's proxy headers, either way (the
  // browser's absolute-form request line and proxy headers against ours to the upstream): under 1 KiB a request.
  expect(Math.abs(metered - upstreamBytes)).toBeLessThan(upstream.users.length * 1_024);
  expect(metered).toBeGreaterThan(2_000);
});

test("proxyCountryCode null: no proxy, nothing through the upstream, no proxy bytes metered", async () => {
  const before = upstream.users.length;
  expect(await browse(undefined)).toBe(0);
  expect(upstream.users.length).toBe(before);
});

test("a customProxy carries the browser's pages with its credentials instead of the country's upstream; it is not metered, and its password is stored nowhere", async () => {
  const before = { upstream: upstream.users.length, custom: custom.users.length };
  const customProxy = {
    host: "127.0.0.1",
    port: custom.port,
    username: "alice",
    password: CUSTOM_PASSWORD,
    ignoreCertErrors: false,
  };
  expect(await browse("de", customProxy)).toBe(0);
  expect(custom.users.length - before.custom).toBeGreaterThanOrEqual(2);
  expect(new Set(custom.users)).toEqual(new Set(["alice"]));
  expect(upstream.users.length).toBe(before.upstream);
  const [browser] = (await h.client.listBrowsers({ projectId: project, pageNumber: 1, pageSize: 1 })).items;
  expect(browser.settings?.customProxy).toEqual({
    host: "127.0.0.1",
    port: custom.port,
    ignoreCertErrors: false,
    authenticated: true,
  });
  expect(browser.settings?.proxyCountryCode).toBeUndefined();
  const stored = await storedText(h.infra);
  expect(stored).toContain(browser.id);
  expect(stored).not.toContain(CUSTOM_PASSWORD);
});

test("a customProxy the egress policy closes (our own services, loopback) is refused before any browser starts", async () => {
  const { totalItems } = await h.client.listBrowsers({ projectId: project, pageNumber: 1, pageSize: 1 });
  const grpcPort = h.service.grpcPort;
  const refused = h.client.createBrowser({
    projectId: project,
    settings: {
      allowedDomains: [],
      record: false,
      customProxy: { host: "127.0.0.1", port: grpcPort, ignoreCertErrors: false },
    },
    timeoutMinutes: 0,
    metadata: {},
  });
  await expect(refused).rejects.toMatchObject({
    code: 3,
    field: ["body", "customProxy", "host"],
    details: `customProxy is closed by the browser egress policy: 127.0.0.1:${grpcPort} is one of this service's own ports`,
  });
  expect((await h.client.listBrowsers({ projectId: project, pageNumber: 1, pageSize: 1 })).totalItems).toBe(totalItems);
});

test("customProxy.ignoreCertErrors: a browser behind a proxy that inspects TLS loads what it signs; without it, the certificate is refused", async () => {
  const open = async (ignoreCertErrors: boolean) => {
    const customProxy = { host: "127.0.0.1", port: custom.port, username: "alice", password: CUSTOM_PASSWORD };
    const created = await h.client.createBrowser({
      projectId: project,
      settings: { allowedDomains: [], record: false, customProxy: { ...customProxy, ignoreCertErrors } },
      timeoutMinutes: 0,
      metadata: {},
    });
    const client = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl, defaultViewport: null });
    try {
      const page = await client.newPage();
      return await page
        .goto(`https://${untrusted.host}/`)
        .then(() => page.title())
        .catch((err: Error) => err.message);
    } finally {
      await client.disconnect();
      await h.client.stopBrowser({ projectId: project, browserId: created.id });
    }
  };
  expect(await open(false)).toContain("net::ERR_CERT_AUTHORITY_INVALID");
  expect(await open(true)).toBe("Inspected");
}, 60_000);

test("an upstream proxy that is down is a clear answer at once, not a hang", async () => {
  await upstream.close();
  const created = await h.client.createBrowser({
    projectId: project,
    settings: { proxyCountryCode: "fr", allowedDomains: [], record: false },
    timeoutMinutes: 0,
    metadata: {},
  });
  const client = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl, defaultViewport: null });
  const page = await client.newPage();
  const started = Date.now();
  const response = await page.goto(site.url, { timeout: 20_000 });
  const elapsed = Date.now() - started;
  expect({ status: response?.status(), text: response?.statusText() }).toEqual({
    status: 594,
    text: "Connection Refused",
  });
  expect(elapsed).toBeLessThan(10_000);
  await client.disconnect();
  await h.client.stopBrowser({ projectId: project, browserId: created.id });
}, 60_000);
