import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MEANS_CHROMIUM, scrapeMetrics, sumOf } from "@bas/testing";
import puppeteer, { type Page } from "puppeteer-core";
import { eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";

/**
 * The tests that wait for warm pools to refill, round after round, wait for launches one after another: ~1-1.5 s each
 * alone on a slow 2-core machine, several times that beside other test files. Their budgets are that work's, not the
 * suite's 60 s and the 30 s a pool's fill is given by default.
 */
const LAUNCH_BOUND_MS = 180_000;
const FILL_MS = 90_000;
// The refill starts as soon as a browser is taken, rather than a second later: these tests wait for it every round.
const refillAtOnce = { spareRefillDelayMs: 0 };
// The limits count browsers, whichever Chromium they are: the lighter one launches them, round after round. The warm
// pool's tests fit windows, which only full Chromium does.
const MEANS = { CHROMIUM_PATH: MEANS_CHROMIUM };

/**
 * What a page sees of its window and screen. A window that another one opened over reports its content area as its
 * outer bounds (headless Chromium's own behaviour, at the launch size too), so only a new page's window is compared.
 */
const geometry = (page: Page) =>
  page.evaluate(() => ({
    viewport: [window.innerWidth, window.innerHeight],
    window: [window.screenX, window.screenY, window.outerWidth, window.outerHeight],
    screen: [screen.width, screen.height, screen.availWidth, screen.availHeight],
  }));

describe("limits", () => {
  let h: PoolHarness;
  beforeAll(async () => {
    h = await startPoolHarness({ MAX_BROWSERS_PER_PROJECT: "2", MAX_BROWSERS_PER_NODE: "3", ...MEANS });
  });
  afterAll(() => h?.close());

  const create = (projectId: string) =>
    h.client.createBrowser({
      projectId,
      settings: { screenWidth: 800, screenHeight: 600, allowedDomains: [], record: false },
      timeoutMinutes: 0,
      metadata: {},
    });

  test("a project over its maximum and a node at capacity are refused with RESOURCE_EXHAUSTED and a clear reason", async () => {
    const a = randomUUID();
    const b = randomUUID();
    const [a1] = await Promise.all([create(a), create(a)]);
    await expect(create(a)).rejects.toMatchObject({
      code: 8,
      kind: "limit_exceeded",
      details: expect.stringContaining("Too many concurrent active browsers for this project (maximum 2)"),
    });
    await create(b);
    await expect(create(b)).rejects.toMatchObject({
      code: 8,
      details: expect.stringContaining("capacity (3 browsers)"),
    });
    await h.client.stopBrowser({ projectId: a, browserId: a1.id });
    await expect(create(b)).resolves.toMatchObject({ status: "active" });
  });
});

describe("a project at exactly its limit", () => {
  let h: PoolHarness;
  const LIMIT = 4;
  beforeAll(async () => {
    h = await startPoolHarness(
      { MAX_BROWSERS_PER_PROJECT: String(LIMIT), MAX_BROWSERS_PER_NODE: "20", WARM_POOL_SIZE: String(LIMIT), ...MEANS },
      refillAtOnce,
    );
  });
  afterAll(() => h?.close());

  test(
    "gets every browser it asks for, round after round: a browser starting is never counted twice",
    async () => {
      const project = randomUUID();
      for (let round = 0; round < 3; round++) {
        await h.service.warmPoolFilled(FILL_MS);
        // Warm browsers are handed out in milliseconds: the later requests of a round arrive while the earlier ones are
        // being recorded, which is when a browser could be counted both as starting and as running.
        const results = await Promise.allSettled(
          Array.from({ length: LIMIT }, async (_, i) => {
            await new Promise((resolve) => setTimeout(resolve, i * 10));
            return h.client.createBrowser({
              projectId: project,
              settings: { proxyCountryCode: "us", allowedDomains: [], record: false },
              timeoutMinutes: 0,
              metadata: {},
            });
          }),
        );
        const refused = results.filter((r) => r.status === "rejected").map((r) => (r.reason as Error).message);
        expect([round, refused]).toEqual([round, []]);
        const ids = results.map((r) => (r as PromiseFulfilledResult<{ id: string }>).value.id);
        await Promise.all(ids.map((browserId) => h.client.stopBrowser({ projectId: project, browserId })));
      }
    },
    LAUNCH_BOUND_MS,
  );
});

describe("a project's limit across nodes", () => {
  // Two nodes on one database, as replicas behind one address: a burst of one project's creates spread over both.
  const LIMIT = 3;
  const env = {
    MAX_BROWSERS_PER_PROJECT: String(LIMIT),
    MAX_BROWSERS_PER_NODE: "20",
    WARM_POOL_SIZE: String(LIMIT),
    ...MEANS,
  };
  let nodes: PoolHarness[] = [];
  let otherDir: string;
  beforeAll(async () => {
    const first = await startPoolHarness(env, refillAtOnce);
    otherDir = mkdtempSync(join(tmpdir(), "bas-bp-limit-"));
    nodes = [first, await startPoolHarness(env, refillAtOnce, { infra: first.infra, dataDir: otherDir })];
  });
  afterAll(async () => {
    for (const node of [...nodes].reverse()) await node.close();
    rmSync(otherDir, { recursive: true, force: true });
  });

  test(
    "holds when both nodes admit at the same instant, and a project below it still gets every browser",
    async () => {
      const project = randomUUID();
      /**
       * Stops them, and waits until they no longer count: the read model shows them stopped (for the other node; a read
       * on the node that answered the stop waits for that) and their own node has ended them.
       */
      async function stopAll(ids: string[]) {
        const stop = (browserId: string) => nodes[0].client.stopBrowser({ projectId: project, browserId });
        await Promise.all(ids.map(stop));
        for (const browserId of ids) {
          expect(await nodes[0].client.getBrowser({ projectId: project, browserId })).toMatchObject({
            status: "stopped",
          });
        }
        await eventually(async () => {
          const running = nodes.flatMap((node) => node.service.liveBrowserIds()).filter((id) => ids.includes(id));
          return running.length === 0 || undefined;
        });
      }
      for (let round = 0; round < 3; round++) {
        await Promise.all(nodes.map((node) => node.service.warmPoolFilled(FILL_MS)));
        // Twice the limit at once, half on each node: each node alone would find room for all of its half.
        const results = await Promise.allSettled(
          Array.from({ length: 2 * LIMIT }, (_, i) =>
            nodes[i % 2].client.createBrowser({
              projectId: project,
              settings: { allowedDomains: [], record: false },
              timeoutMinutes: 0,
              metadata: {},
            }),
          ),
        );
        const created = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.id] : []));
        const refused = results.flatMap((r) => (r.status === "rejected" ? [(r.reason as { kind: string }).kind] : []));
        expect([round, created.length, refused]).toEqual([round, LIMIT, Array(LIMIT).fill("limit_exceeded")]);
        await stopAll(created);
        // Below the limit again, every browser asked for comes, whichever node each request reaches.
        await Promise.all(nodes.map((node) => node.service.warmPoolFilled(FILL_MS)));
        const again = await Promise.all(
          Array.from({ length: LIMIT }, (_, i) =>
            nodes[(i + round) % 2].client.createBrowser({
              projectId: project,
              settings: { allowedDomains: [], record: false },
              timeoutMinutes: 0,
              metadata: {},
            }),
          ),
        );
        await stopAll(again.map(({ id }) => id));
      }
    },
    LAUNCH_BOUND_MS,
  );

  test(
    "at its limit, gets a browser on either node the moment one is stopped on either node",
    async () => {
      const project = randomUUID();
      const create = (node: PoolHarness) =>
        node.client.createBrowser({
          projectId: project,
          settings: { allowedDomains: [], record: false },
          timeoutMinutes: 0,
          metadata: {},
        });
      const running = [await create(nodes[0]), await create(nodes[1]), await create(nodes[0])];
      await expect(create(nodes[1])).rejects.toMatchObject({ kind: "limit_exceeded" });
      // Every pairing of the node that stops and the node that creates, the browser stopped on either: the stop is
      // answered before the read model or the browser's own node know of it, and the create comes right after.
      for (let round = 0; round < 12; round++) {
        await Promise.all(nodes.map((node) => node.service.warmPoolFilled(FILL_MS)));
        const stopped = running.shift();
        if (!stopped) throw new Error("no browser to stop");
        await nodes[round % 2].client.stopBrowser({ projectId: project, browserId: stopped.id });
        const creator = nodes[Math.floor(round / 2) % 2];
        // What the gateway asks before it creates a session, then the create.
        await creator.client.requireBrowserCapacity({ projectId: project });
        running.push(await create(creator));
      }
      await Promise.all(running.map(({ id }) => nodes[0].client.stopBrowser({ projectId: project, browserId: id })));
    },
    LAUNCH_BOUND_MS,
  );
});

describe("warm pool", () => {
  let h: PoolHarness;
  const project = randomUUID();
  beforeAll(async () => {
    h = await startPoolHarness({ WARM_POOL_SIZE: "1" });
    await h.service.warmPoolFilled();
  });
  afterAll(() => h?.close());

  const create = (settings?: { screenWidth: number; screenHeight: number; record: boolean; profileId?: string }) =>
    h.client.createBrowser({
      projectId: project,
      settings: (settings && { ...settings, allowedDomains: [] }) ?? {
        proxyCountryCode: "us",
        allowedDomains: [],
        record: false,
      },
      timeoutMinutes: 0,
      metadata: {},
    });

  test("a default request gets the idle browser launched before it; the pool refills; no browser goes twice", async () => {
    const [warmId] = await h.chromiumIds();
    expect(warmId).toBeDefined();
    const [first, second] = await Promise.all([create(), create()]);
    expect([first.id, second.id]).toContain(warmId);
    expect(first.id).not.toBe(second.id);
    for (const b of [first, second]) {
      const client = await puppeteer.connect({ browserWSEndpoint: b.cdpUrl, defaultViewport: null });
      expect(await (await client.newPage()).evaluate(() => 1 + 1)).toBe(2);
      await client.disconnect();
    }
    // Refilled in the background with a fresh browser.
    await h.service.warmPoolFilled();
    const running = await h.chromiumIds();
    const refill = running.find((id) => id !== first.id && id !== second.id);
    expect(refill).toBeDefined();

    await h.client.stopBrowser({ projectId: project, browserId: warmId });
    const next = await create();
    expect(next.id).toBe(refill);
    expect(next.id).not.toBe(warmId);
    for (const b of [first, second, next]) await h.client.stopBrowser({ projectId: project, browserId: b.id });
  });

  test("any settings but a profile are served warm, fitted to the request: window size, no proxy, allowedDomains", async () => {
    await h.service.warmPoolFilled();
    const idle = await h.chromiumIds();
    const fitted = await h.client.createBrowser({
      projectId: project,
      settings: { screenWidth: 1024, screenHeight: 700, allowedDomains: ["example.com"], record: false },
      timeoutMinutes: 0,
      metadata: {},
    });
    expect(idle).toContain(fitted.id);
    expect(fitted.settings?.proxyCountryCode).toBeUndefined();
    const client = await puppeteer.connect({ browserWSEndpoint: fitted.cdpUrl, defaultViewport: null });
    const [first] = await client.pages();
    const page = await client.newPage();
    const [launched, opened] = await Promise.all([first, page].map(geometry));
    // The page the browser had and a new one: a 1024x700 window filling a screen of that size, the same viewport.
    expect(opened).toMatchObject({ window: [0, 0, 1024, 700], screen: [1024, 700, 1024, 700] });
    expect(launched).toMatchObject({ viewport: opened.viewport, screen: opened.screen });
    expect(opened.viewport[0]).toBe(1024);
    const refused = await page.goto("http://elsewhere.test/");
    expect(refused?.status()).toBe(403);
    expect(refused?.headers()["x-egress-blocked"]).toMatch(/allowedDomains: elsewhere\.test is not example\.com/);
    await client.disconnect();
    await h.client.stopBrowser({ projectId: project, browserId: fitted.id });
  });

  test("the pool's window size follows demand: a caller that keeps asking for one size gets it unresized", async () => {
    const resized = async () =>
      sumOf(await scrapeMetrics(h.service.metricsPort), "bas_browser_pool_warm_resized_total", {
        service: "browser-pool",
      }) ?? Number.NaN;
    const viewports = async (cdpUrl: string) => {
      const client = await puppeteer.connect({ browserWSEndpoint: cdpUrl, defaultViewport: null });
      const sizes = await Promise.all([(await client.pages())[0], await client.newPage()].map(geometry));
      await client.disconnect();
      return sizes;
    };
    const small = { screenWidth: 1366, screenHeight: 768, record: false };
    await h.service.warmPoolFilled();
    const before = await resized();
    const first = await create(small);
    expect(await resized()).toBe(before + 1);
    await h.client.stopBrowser({ projectId: project, browserId: first.id });
    // The pool remembers 4 requests (4 × WARM_POOL_SIZE); with three of them this size's, it has most demand.
    for (let i = 0; i < 2; i++) {
      await h.service.warmPoolFilled();
      await h.client.stopBrowser({ projectId: project, browserId: (await create(small)).id });
    }

    await h.service.warmPoolFilled();
    const [refill] = await h.chromiumIds();
    const unresized = await resized();
    const next = await create(small);
    expect(next.id).toBe(refill);
    expect(await resized()).toBe(unresized);
    // Its first page and a new one share the viewport; a window is 1366x768 all in all, filling a screen that size.
    const [launchedPage, newPage] = await viewports(next.cdpUrl);
    expect(launchedPage).toMatchObject({ viewport: newPage.viewport, screen: newPage.screen });
    expect(newPage.viewport[0]).toBe(1366);
    expect(newPage).toMatchObject({ window: [0, 0, 1366, 768], screen: [1366, 768, 1366, 768] });

    // The refill has that size again; a caller of another size gets it resized.
    await h.service.warmPoolFilled();
    const other = await create();
    expect(await resized()).toBe(unresized + 1);
    expect((await viewports(other.cdpUrl))[1]).toMatchObject({
      window: [0, 0, 1920, 1080],
      screen: [1920, 1080, 1920, 1080],
    });
    for (const b of [next, other]) await h.client.stopBrowser({ projectId: project, browserId: b.id });
  });

  test("a browser with a profile launches cold", async () => {
    await h.service.warmPoolFilled();
    const idle = await h.chromiumIds();
    const profile = await h.client.createProfile({ projectId: project, name: "cold" });
    const cold = await create({ screenWidth: 1920, screenHeight: 1080, record: false, profileId: profile.id });
    expect(idle).not.toContain(cold.id);
    await h.client.stopBrowser({ projectId: project, browserId: cold.id });
    await eventually(async () => ((await h.chromiumIds()).includes(cold.id) ? undefined : true));
  });

  test("/metrics: acquisitions warm and cold, browsers by state, the warm target, CDP bytes and connections", async () => {
    await h.service.warmPoolFilled();
    const warm = await create();
    const profile = await h.client.createProfile({ projectId: project, name: "metrics" });
    const cold = await create({ screenWidth: 900, screenHeight: 700, record: false, profileId: profile.id });
    const client = await puppeteer.connect({ browserWSEndpoint: cold.cdpUrl, defaultViewport: null });
    await (await client.newPage()).evaluate(() => document.title);

    const samples = await scrapeMetrics(h.service.metricsPort);
    const node = { service: "browser-pool", node: h.service.nodeId };
    const acquired = (source: string) =>
      sumOf(samples, "bas_browser_pool_acquire_duration_seconds_count", { service: "browser-pool", source });
    expect(acquired("warm")).toBeGreaterThanOrEqual(1);
    expect(acquired("cold")).toBeGreaterThanOrEqual(1);
    expect(sumOf(samples, "bas_browser_pool_browsers", { ...node, state: "active" })).toBe(2);
    expect(sumOf(samples, "bas_browser_pool_warm_target", node)).toBe(1);
    expect(sumOf(samples, "bas_browser_pool_cdp_connections", node)).toBe(1);
    expect(sumOf(samples, "bas_browser_pool_cdp_bytes_total", { ...node, direction: "to_browser" })).toBeGreaterThan(0);
    expect(sumOf(samples, "bas_browser_pool_cdp_bytes_total", { ...node, direction: "to_client" })).toBeGreaterThan(0);
    const createBrowser = { method: "bas.v1.BrowserPool/CreateBrowser", code: "OK" };
    expect(sumOf(samples, "bas_grpc_server_duration_seconds_count", createBrowser)).toBeGreaterThanOrEqual(2);

    await client.disconnect();
    for (const b of [warm, cold]) await h.client.stopBrowser({ projectId: project, browserId: b.id });
    const after = await scrapeMetrics(h.service.metricsPort);
    expect(sumOf(after, "bas_browser_pool_browsers", { ...node, state: "active" })).toBe(0);
  });
});
