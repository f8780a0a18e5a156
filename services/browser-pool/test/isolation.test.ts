import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { resolveWithSystem } from "../src/adapters/network-proxy/network-proxy";
import { eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";
import { startTestSite, TEST_PAGE_TITLE } from "./support/test-site";
import { uploadProbe } from "./support/upload-probe";

/**
 * A tenant holds its browser's cdpUrl and may do anything CDP allows with it. Nothing it does may reach the host's
 * files, loopback, private or link-local addresses, or another browser's DevTools; only BROWSER_EGRESS_ALLOW opens a
 * destination (here: the test site).
 */
let h: PoolHarness;
let site: Awaited<ReturnType<typeof startTestSite>>;
let hostOnly: Server;
let hostOnlyPort: number;
const hostOnlyRequests: string[] = [];
let secretsDir: string;
let tenant: Browser;
let page: Page;
const project = randomUUID();
const SECRET = `secret-${randomUUID()}`;
/** Every name a browser's egress proxy looked up, in order. */
const namesLookedUp: string[] = [];

beforeAll(async () => {
  site = await startTestSite();
  // A service of the host's that no browser may reach: it records every request that arrives.
  hostOnly = createServer((req, res) => {
    hostOnlyRequests.push(req.url ?? "");
    res.end(SECRET);
  });
  await new Promise<void>((resolve) => hostOnly.listen(0, "127.0.0.1", resolve));
  hostOnlyPort = (hostOnly.address() as { port: number }).port;
  // A file like DATA_DIR/secrets.json: the host's, readable by its owner only.
  secretsDir = mkdtempSync(join(tmpdir(), "bas-isolation-secrets-"));
  writeFileSync(join(secretsDir, "secrets.json"), SECRET, { mode: 0o600 });

  h = await startPoolHarness(
    { BROWSER_EGRESS_ALLOW: site.host },
    // A DNS name that resolves to loopback, as an attacker's domain would.
    {
      // Names under site.test are the test site (allowedDomains tests): two hosts, one server.
      resolve: async (name) => {
        namesLookedUp.push(name);
        return name === "loopback.attacker.test" || name.endsWith(".site.test")
          ? [{ address: "127.0.0.1", family: 4 }]
          : resolveWithSystem(name);
      },
    },
  );
  ({ client: tenant, tab: page } = await browserWithTab(h));
}, 60_000);

afterAll(async () => {
  await tenant?.disconnect();
  await h?.close();
  await site?.close();
  hostOnly?.closeAllConnections();
  await new Promise<void>((resolve) => (hostOnly ? hostOnly.close(() => resolve()) : resolve()));
  rmSync(secretsDir, { recursive: true, force: true });
});

/** A new browser of the tenant's on `pool`, connected as a tenant connects, with a new tab open. */
async function browserWithTab(pool: PoolHarness) {
  const browser = await pool.client.createBrowser({
    projectId: project,
    settings: undefined,
    timeoutMinutes: 0,
    metadata: {},
  });
  const client = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
  return { browser, client, tab: await client.newPage() };
}

/** Navigates and returns what the page shows, or the navigation error. */
async function open(url: string): Promise<{ status?: number; text: string }> {
  try {
    const response = await page.goto(url, { timeout: 15_000 });
    return { status: response?.status(), text: await page.evaluate(() => document.body?.textContent ?? "") };
  } catch (err) {
    return { text: (err as Error).message };
  }
}

test("an allowed destination works: the egress policy opens exactly what BROWSER_EGRESS_ALLOW names", async () => {
  await page.goto(site.url);
  expect(await page.title()).toBe(TEST_PAGE_TITLE);
});

test("a browser goes nowhere of its own accord: from launch to stop, its proxy looks up only what its page asks for", async () => {
  // Chromium phones home at launch unless told not to (network time, component updates, Google account checks):
  // requests that would tell a third party about the host, and that a paid upstream proxy would bill to the tenant.
  const from = namesLookedUp.length;
  const { browser, client, tab } = await browserWithTab(h);
  await tab.goto(`http://own.site.test:${new URL(site.url).port}/`);
  expect(await tab.title()).toBe(TEST_PAGE_TITLE);
  await client.disconnect();
  await h.client.stopBrowser({ projectId: project, browserId: browser.id });
  // The page and its favicon: the one name, looked up once for each.
  expect([...new Set(namesLookedUp.slice(from))]).toEqual(["own.site.test"]);
});

test("file:// is refused, and the host's files are not there even through a file upload", async () => {
  for (const url of ["file:///etc/passwd", `file://${join(secretsDir, "secrets.json")}`]) {
    const result = await open(url);
    expect(result.text).toMatch(/ERR_BLOCKED_BY_ADMINISTRATOR/);
  }
  // DOM.setFileInputFiles hands a host path to the page: the sandbox has no such file, so nothing can be read.
  const upload = await uploadProbe(tenant, site.url);
  expect(await upload.read(join(secretsDir, "secrets.json"))).not.toContain("secret-");
  // Nor is the host's /etc, only the few files Chromium reads: not the host's users, not its name.
  for (const path of ["/etc/passwd", "/etc/hostname"]) {
    expect(readFileSync(path, "utf8")).not.toBe("");
    expect(await upload.read(path)).toMatch(/^(no file|unreadable: \w+)$/);
  }
  await upload.close();
});

test.each([
  ["a loopback address", () => `http://127.0.0.1:${hostOnlyPort}/`, /loopback/],
  ["IPv6 loopback", () => `http://[::1]:${hostOnlyPort}/`, /loopback/],
  ["an IPv4-mapped IPv6 loopback", () => `http://[::ffff:127.0.0.1]:${hostOnlyPort}/`, /loopback/],
  ["localhost (a name that resolves to loopback)", () => `http://localhost:${hostOnlyPort}/`, /loopback/],
  ["an attacker's name that resolves to loopback", () => `http://loopback.attacker.test:${hostOnlyPort}/`, /loopback/],
  ["a redirect to loopback from an allowed site", () => `${site.url}redirect?to=127.0.0.1:${hostOnlyPort}`, /loopback/],
  ["a private address", () => "http://10.11.12.13/", /private/],
  ["the cloud metadata address", () => "http://169.254.169.254/latest/meta-data/", /link-local/],
  ["a unique-local IPv6 address", () => "http://[fd00::1]/", /private/],
  ["the DevTools port inside the sandbox", () => "http://127.0.0.1:9222/json/list", /loopback/],
])("%s is refused with the reason, and nothing reaches it", async (_what, url, reason) => {
  const before = hostOnlyRequests.length;
  const result = await open(url());
  expect(result.status).toBe(403);
  expect(result.text).toMatch(/Blocked by the browser egress policy/);
  expect(result.text).toMatch(reason);
  expect(result.text).not.toContain(SECRET);
  expect(hostOnlyRequests.length).toBe(before);
});

describe("allowedDomains", () => {
  const ALLOWED = "allowed.site.test";
  const OTHER = "other.site.test";
  const REASON = `Blocked by the browser's allowedDomains: ${OTHER} is not ${ALLOWED} or one of its subdomains`;
  const at = (host: string, path = "/") => `http://${host}:${new URL(site.url).port}${path}`;
  const reachedOther = () => site.requests.filter((r) => r.startsWith(`${OTHER}:`));

  /** Puts an image, a frame and a fetch of `OTHER` into the page; says what the page saw of each. */
  const loadFromOther = (tab: Page) =>
    tab.evaluate(
      async (img, frame, fetched) => {
        const image = new Promise<string>((resolve) => {
          const el = document.createElement("img");
          el.onload = () => resolve("loaded");
          el.onerror = () => resolve("error");
          el.src = img;
          document.body.append(el);
        });
        const iframe = document.createElement("iframe");
        iframe.src = frame;
        const framed = new Promise<void>((resolve) => {
          iframe.onload = () => resolve();
        });
        document.body.append(iframe);
        const fetchResult = await fetch(fetched).then(
          (r) => `answered ${r.status}`,
          (err: Error) => `rejected: ${err.name}`,
        );
        await framed;
        return { image: await image, fetch: fetchResult };
      },
      at(OTHER, "/image.png"),
      at(OTHER, "/frame"),
      at(OTHER, "/fetched"),
    );

  test("a limited browser loads its host; navigation, a subframe, an image and a fetch to another host are refused with the reason and never reach it", async () => {
    const created = await h.client.createBrowser({
      projectId: project,
      settings: { record: false, allowedDomains: ["Allowed.Site.test"] },
      timeoutMinutes: 0,
      metadata: {},
    });
    // Recorded lowercase, and shown.
    expect(created.settings?.allowedDomains).toEqual([ALLOWED]);
    const client = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl, defaultViewport: null });
    try {
      const tab = await client.newPage();
      await tab.goto(at(ALLOWED));
      expect(await tab.title()).toBe(TEST_PAGE_TITLE);

      const before = reachedOther().length;
      const refused = await tab.goto(at(OTHER));
      expect(refused?.status()).toBe(403);
      expect(refused?.headers()["x-egress-blocked"]).toBe(REASON);
      expect(await tab.evaluate(() => document.body.textContent)).toContain(REASON);

      await tab.goto(at(ALLOWED));
      const seen = await loadFromOther(tab);
      expect(seen.image).toBe("error");
      // The proxy's 403 has no CORS header, so the page sees the fetch fail (the site's own answers have one).
      expect(seen.fetch).toBe("rejected: TypeError");
      const frame = tab.frames().find((f) => f.url().includes(OTHER));
      expect(await frame?.evaluate(() => document.body.textContent)).toContain(REASON);
      expect(reachedOther().length).toBe(before);
    } finally {
      await client.disconnect();
      await h.client.stopBrowser({ projectId: project, browserId: created.id }).catch(() => undefined);
    }
  });

  test("a browser without allowedDomains reaches both hosts", async () => {
    await page.goto(at(ALLOWED));
    const before = reachedOther().length;
    await page.goto(at(OTHER));
    expect(await page.title()).toBe(TEST_PAGE_TITLE);
    const seen = await loadFromOther(page);
    expect(seen).toEqual({ image: "error", fetch: "answered 200" }); // HTML is no image, but the request arrived
    expect(reachedOther().slice(before)).toEqual(
      expect.arrayContaining([`${OTHER}:${new URL(site.url).port}/image.png`, expect.stringMatching(/\/fetched$/)]),
    );
  });

  test("a pattern that is not a host is INVALID_ARGUMENT naming the field", async () => {
    for (const [allowedDomains, field] of [
      [
        ["ok.test", "https://evil.test/"],
        ["body", "allowedDomains", 1],
      ],
      [["example.com:443"], ["body", "allowedDomains", 0]],
    ] as const) {
      await expect(
        h.client.createBrowser({
          projectId: project,
          settings: { record: false, allowedDomains: [...allowedDomains] },
          timeoutMinutes: 0,
          metadata: {},
        }),
      ).rejects.toMatchObject({ code: 3, field });
    }
  });
});

test("the stack's own ports stay closed even when BROWSER_EGRESS_ALLOW opens all of loopback", async () => {
  const wide = await startPoolHarness({ BROWSER_EGRESS_ALLOW: "127.0.0.0/8", CDP_PORT: "0" }, {}, undefined);
  try {
    const { browser, client, tab } = await browserWithTab(wide);
    const cdp = new URL(browser.cdpUrl);
    const postgres = new URL(wide.env.DATABASE_URL);
    for (const target of [
      `127.0.0.1:${cdp.port}`,
      `127.0.0.1:${wide.service.grpcPort}`,
      `127.0.0.1:${postgres.port}`,
    ]) {
      const response = await tab.goto(`http://${target}/`);
      expect(response?.status()).toBe(403);
      expect(await tab.evaluate(() => document.body.textContent)).toMatch(/this service's own ports/);
    }
    // Opened loopback is open: the host-only service answers.
    await tab.goto(`http://127.0.0.1:${hostOnlyPort}/`);
    expect(await tab.evaluate(() => document.body.textContent)).toBe(SECRET);
    await client.disconnect();
  } finally {
    await wide.close();
  }
});

test("no browser has a DevTools (or any) TCP port on the host, and none runs as root", async () => {
  const second = await h.client.createBrowser({
    projectId: randomUUID(),
    settings: undefined,
    timeoutMinutes: 0,
    metadata: {},
  });
  expect(second.id).toBeTruthy();
  const listening = listeningSocketInodes();
  const browserPids = processesWithArg(`--user-data-dir=${h.dataDir}/`);
  expect(browserPids.length).toBeGreaterThan(0);
  for (const pid of browserPids) {
    const sockets = socketInodesOf(pid).filter((inode) => listening.has(inode));
    expect({ pid, sockets }).toEqual({ pid, sockets: [] });
  }
  const chromium = browserPids.filter((pid) =>
    readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0].endsWith("/chromium"),
  );
  expect(chromium.length).toBeGreaterThan(0);
  for (const pid of chromium) {
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
    if (process.getuid?.() === 0) expect(uid).toBeGreaterThan(0);
  }
});

test("a killed browser leaves nothing in the host's /tmp: its temp files lived in its own sandbox", async () => {
  const browser = await h.client.createBrowser({
    projectId: randomUUID(),
    settings: undefined,
    timeoutMinutes: 0,
    metadata: {},
  });
  const client = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
  await (await client.newPage()).goto(site.url);
  await client.disconnect();
  // Chromium keeps its singleton socket in a temp folder (/tmp/org.chromium.*) and links it from the profile.
  const tempDir = dirname(readlinkSync(join(h.dataDir, browser.id, "SingletonSocket")));
  expect(tempDir).toMatch(/org\.chromium\./);
  for (const pid of processesWithArg(`--user-data-dir=${join(h.dataDir, browser.id)}`)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  await eventually(
    async () =>
      (await h.client.getBrowser({ projectId: browser.projectId, browserId: browser.id })).status === "stopped"
        ? true
        : undefined,
    15_000,
    "the crash recorded",
  );
  expect(existsSync(tempDir)).toBe(false);
});

/** Inodes of TCP sockets listening in this (the host's) network namespace. */
function listeningSocketInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === "0A") inodes.add(fields[9]);
    }
  }
  return inodes;
}

function socketInodesOf(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/fd`)
      .map((fd) => {
        try {
          return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        } catch {
          return undefined;
        }
      })
      .filter((inode): inode is string => inode !== undefined);
  } catch {
    return [];
  }
}

function processesWithArg(prefix: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8")
          .split("\0")
          .some((arg) => arg.startsWith(prefix));
      } catch {
        return false;
      }
    });
}
