import { randomUUID } from "node:crypto";
import { scrapeMetrics, sumOf } from "@bas/testing";
import puppeteer from "puppeteer-core";
import { eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";

describe("limits", () => {
  let h: PoolHarness;
  beforeAll(async () => {
    h = await startPoolHarness({ MAX_BROWSERS_PER_PROJECT: "2", MAX_BROWSERS_PER_NODE: "3" });
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

describe("warm pool", () => {
  let h: PoolHarness;
  const project = randomUUID();
  beforeAll(async () => {
    h = await startPoolHarness({ WARM_POOL_SIZE: "1" });
    await h.service.warmPoolFilled();
  });
  afterAll(() => h?.close());

  const create = (settings?: { screenWidth: number; screenHeight: number; record: boolean }) =>
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

  test("non-default settings launch cold with the size asked for", async () => {
    await h.service.warmPoolFilled();
    const idle = await h.chromiumIds();
    const cold = await create({ screenWidth: 1024, screenHeight: 700, record: false });
    expect(idle).not.toContain(cold.id);
    expect(await h.chromiumIds()).toEqual(expect.arrayContaining([...idle, cold.id]));
    const client = await puppeteer.connect({ browserWSEndpoint: cold.cdpUrl, defaultViewport: null });
    const page = await client.newPage();
    expect(await page.evaluate(() => [window.outerWidth, window.outerHeight])).toEqual([1024, 700]);
    await client.disconnect();
    await h.client.stopBrowser({ projectId: project, browserId: cold.id });
    await eventually(async () => ((await h.chromiumIds()).includes(cold.id) ? undefined : true));
  });

  test("/metrics: acquisitions warm and cold, browsers by state, the warm target, CDP bytes and connections", async () => {
    await h.service.warmPoolFilled();
    const warm = await create();
    const cold = await create({ screenWidth: 900, screenHeight: 700, record: false });
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
