import { randomUUID } from "node:crypto";
import { createNatsEventStore } from "@bas/event-store";
import { billing } from "@bas/proto";
import puppeteer from "puppeteer-core";
import { eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";
import { startTestSite, TEST_PAGE_TITLE } from "./support/test-site";
import { usageMessages } from "./support/usage-stream";

let h: PoolHarness;
let site: Awaited<ReturnType<typeof startTestSite>>;
const project = randomUUID();

beforeAll(async () => {
  site = await startTestSite();
  h = await startPoolHarness({ USAGE_INTERVAL_MS: "300", BROWSER_EGRESS_ALLOW: site.host });
});
afterAll(async () => {
  await h?.close();
  await site?.close();
});

test("browser time and proxy bytes are published as UsageRecorded, periodically and at stop, never counted twice", async () => {
  const sessionId = randomUUID();
  const { browser } = await h.client.acquireBrowser({
    projectId: project,
    sessionId,
    settings: { proxyCountryCode: "us", allowedDomains: [], record: false },
  });
  const client = await puppeteer.connect({ browserWSEndpoint: browser!.cdpUrl, defaultViewport: null });
  const page = await client.newPage();
  await page.goto(site.url);
  expect(await page.title()).toBe(TEST_PAGE_TITLE);
  await client.disconnect();
  // At least one periodic report before the stop.
  await eventually(async () => {
    const mine = (await usageMessages(h.infra)).filter((m) => m.usage.browserId === browser!.id);
    return mine.some((m) => m.usage.browser) ? true : undefined;
  });
  const stopped = await h.client.releaseBrowser({ projectId: project, sessionId });

  let seen = "nothing";
  const reports = await eventually(
    async () => {
      const mine = (await usageMessages(h.infra)).filter((m) => m.usage.browserId === browser!.id);
      const ms = mine.reduce((sum, m) => sum + (m.usage.browser?.milliseconds ?? 0), 0);
      const lifetime = stopped.finishedAt!.getTime() - stopped.startedAt!.getTime();
      seen = `${ms} ms of browser time over ${mine.filter((m) => m.usage.browser).length} reports (lifetime ${lifetime} ms, last report ${mine.some((m) => m.usage.lastReport)}), ${mine.filter((m) => m.usage.proxy).length} proxy reports`;
      // The stop's final browser-time and proxy reports are published independently: wait for both.
      return ms === lifetime && mine.some((m) => m.usage.proxy) ? mine : undefined;
    },
    30_000,
    "browser time adds up to the browser's lifetime and the proxy bytes are reported",
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last seen: ${seen}`);
  });

  for (const { subject, usage, msgId } of reports) {
    expect(usage).toMatchObject({ projectId: project, sessionId, browserId: browser!.id });
    expect(msgId).toBe(usage.id);
    expect(subject).toBe(h.infra.streams.usage.subject(usage.browser ? "browser" : "proxy"));
  }
  expect(new Set(reports.map((r) => r.usage.id)).size).toBe(reports.length);
  // The page came through the browser's network proxy: its bytes are on the proxy subject.
  const proxyBytes = reports.reduce((sum, m) => sum + (m.usage.proxy?.bytes ?? 0), 0);
  expect(proxyBytes).toBeGreaterThan(2_000);
});

test("a browser without a proxy reports no proxy bytes", async () => {
  const created = await h.client.createBrowser({
    projectId: project,
    settings: { proxyCountryCode: undefined, allowedDomains: [], record: false },
    timeoutMinutes: 0,
    metadata: {},
  });
  const client = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl, defaultViewport: null });
  await (await client.newPage()).goto(site.url);
  await client.disconnect();
  await h.client.stopBrowser({ projectId: project, browserId: created.id });
  const mine = await eventually(async () => {
    const m = (await usageMessages(h.infra)).filter((u) => u.usage.browserId === created.id);
    return m.some((u) => u.usage.browser) ? m : undefined;
  });
  expect(mine.filter((m) => m.usage.proxy)).toEqual([]);
});

test("the cost fields copy billing's latest ChargeRecorded totals for the browser; '0' before any", async () => {
  const created = await h.client.createBrowser({
    projectId: project,
    settings: undefined,
    timeoutMinutes: 0,
    metadata: {},
  });
  expect(created).toMatchObject({ proxyUsedMb: "0", proxyCost: "0", browserCost: "0" });
  const store = createNatsEventStore(h.infra);
  const ledger = { type: "ledger-browser", id: created.id };
  const charge = (usd: string, mb: string) => ({
    type: "ChargeRecorded",
    data: billing.ChargeRecorded.toJSON(
      billing.ChargeRecorded.fromPartial({
        usageId: randomUUID(),
        projectId: project,
        kind: "browser",
        amountUsd: usd,
        totals: {
          inputTokens: 0,
          outputTokens: 0,
          proxyUsedMb: mb,
          llmCostUsd: "0",
          proxyCostUsd: "0.0021",
          browserCostUsd: usd,
          totalCostUsd: "0.0121",
        },
      }),
    ),
  });
  const first = await store.append(ledger, [charge("0.01", "0.5")], 0);
  await store.append(ledger, [charge("0.0100", "1.25")], first.version);
  const read = await eventually(async () => {
    const b = await h.client.getBrowser({ projectId: project, browserId: created.id });
    return b.proxyUsedMb === "1.25" ? b : undefined;
  });
  expect(read).toMatchObject({ proxyUsedMb: "1.25", proxyCost: "0.0021", browserCost: "0.0100" });

  // Every stop answers what GET shows, the first and a repeated one: costs included.
  const stopped = await h.client.stopBrowser({ projectId: project, browserId: created.id });
  const again = await h.client.stopBrowser({ projectId: project, browserId: created.id });
  const got = await h.client.getBrowser({ projectId: project, browserId: created.id });
  expect(stopped).toMatchObject({ status: "stopped", proxyUsedMb: "1.25", browserCost: "0.0100" });
  expect(again).toEqual(got);
  expect(stopped).toEqual(got);
});
