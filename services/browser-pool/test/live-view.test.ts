import { randomUUID } from "node:crypto";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import WebSocket from "ws";
import { launchTestChromium, type TestChromium } from "../../../test/support/chromium";
import { MAX_LIVE_VIEWERS } from "../src/adapters/cdp/cdp-proxy";
import { liveUrlFor } from "../src/domain/cdp-route";
import { eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";
import { startTestSite } from "./support/test-site";

/**
 * The live view as a person uses it: its page opened in a real Chromium of the test's own (the viewer), watching a
 * pool browser that a tenant drives over CDP.
 */
let h: PoolHarness;
let site: Awaited<ReturnType<typeof startTestSite>>;
let viewer: TestChromium;
const project = randomUUID();

beforeAll(async () => {
  site = await startTestSite();
  h = await startPoolHarness({ BROWSER_EGRESS_ALLOW: site.host });
  viewer = await launchTestChromium({ width: 1400, height: 900 });
}, 60_000);

afterAll(async () => {
  await viewer?.close();
  await h?.close();
  await site?.close();
});

const FORM = `<button id="press" style="position:absolute;left:200px;top:150px;width:160px;height:60px"
  onclick="this.textContent='pressed'">Press</button>
<input id="field" style="position:absolute;left:200px;top:300px;width:300px;height:40px">`;

/** Opens a live link in the viewer and collects what the page logs as an error. */
async function openLive(url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await viewer.browser.newPage();
  const errors: string[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  return { page, errors };
}

const frameOf = (page: Page) => page.$eval("#screen", (img) => (img as HTMLImageElement).src);
const statusOf = (page: Page) => page.$eval("#status", (el) => el.textContent);

/** Clicks the viewer's image where the tenant page's element is (the image is the page scaled to fit). */
async function clickThrough(live: Page, tenant: Page, selector: string) {
  const box = await tenant.$eval(selector, (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2, vw: innerWidth, vh: innerHeight };
  });
  const shown = await live.$eval("#screen", (img) => {
    const el = img as HTMLImageElement;
    const r = el.getBoundingClientRect();
    const scale = Math.min(r.width / el.naturalWidth, r.height / el.naturalHeight);
    const w = el.naturalWidth * scale;
    const hh = el.naturalHeight * scale;
    return { left: r.left + (r.width - w) / 2, top: r.top + (r.height - hh) / 2, w, h: hh };
  });
  await live.mouse.click(shown.left + (box.x / box.vw) * shown.w, shown.top + (box.y / box.vh) * shown.h);
}

async function createTenant(): Promise<{ id: string; cdpUrl: string; liveUrl: string; browser: Browser }> {
  const created = await h.client.createBrowser({
    projectId: project,
    settings: undefined,
    timeoutMinutes: 0,
    metadata: {},
  });
  const browser = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl, defaultViewport: null });
  return { id: created.id, cdpUrl: created.cdpUrl, liveUrl: created.liveUrl!, browser };
}

test("the live view shows the browser as it changes, follows a new tab, and a person takes over: click and typing reach the page", async () => {
  const tenant = await createTenant();
  // Its own credential: neither the CDP secret nor the CDP path.
  const secret = tenant.cdpUrl.split("/").at(-1)!;
  expect(tenant.liveUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/live\/[0-9a-f-]{36}\/[A-Za-z0-9_-]{32}$/);
  expect(tenant.liveUrl).not.toContain(secret);

  const page = (await tenant.browser.pages())[0] ?? (await tenant.browser.newPage());
  await page.goto(site.url);
  const { page: live, errors } = await openLive(tenant.liveUrl);
  await eventually(async () => ((await statusOf(live)) === "Live" ? true : undefined), 15_000, "the view to be live");
  await eventually(async () => ((await live.$eval("#url", (el) => el.textContent)) === site.url ? true : undefined));
  const first = await frameOf(live);

  // The page changes: a new frame shows it.
  await page.setContent(FORM);
  await eventually(async () => ((await frameOf(live)) !== first ? true : undefined), 10_000, "a new frame");

  // Take over: a click and typed text reach the page.
  await live.click("#control");
  await clickThrough(live, page, "#press");
  await eventually(async () => ((await page.$eval("#press", (b) => b.textContent)) === "pressed" ? true : undefined));
  await clickThrough(live, page, "#field");
  await live.keyboard.type("hello live");
  await eventually(async () =>
    (await page.$eval("#field", (i) => (i as HTMLInputElement).value)) === "hello live" ? true : undefined,
  );

  // A new tab is followed and listed with the first one.
  const second = await tenant.browser.newPage();
  await second.goto(`${site.url}second`);
  await eventually(async () =>
    (await live.$eval("#url", (el) => el.textContent))?.endsWith("/second") ? true : undefined,
  );
  const tabs = () => live.$$eval("#tabs button", (buttons) => buttons.map((b) => b.textContent));
  await eventually(async () => ((await tabs()).at(-1) === "Second page" ? true : undefined), 10_000, "the tab list");
  expect(await tabs()).toHaveLength(2);
  if (process.env.LIVE_VIEW_SCREENSHOT) await live.screenshot({ path: process.env.LIVE_VIEW_SCREENSHOT });

  // Stopped: the page says so.
  await tenant.browser.disconnect();
  await h.client.stopBrowser({ projectId: project, browserId: tenant.id });
  await eventually(async () => ((await statusOf(live)) === "Ended" ? true : undefined), 10_000, "the ended state");
  expect(await live.$eval("#overlay", (el) => el.textContent)).toBe("This browser has ended.");
  expect(errors).toEqual([]);
  await live.close();

  // Once stopped, the link shows that the browser is not running, as a wrong link does.
  const after = await fetch(tenant.liveUrl);
  expect(after.status).toBe(404);
  expect(await after.text()).toContain("This browser is not running");
}, 90_000);

test("a view-only link shows the browser but cannot send input; a wrong link is refused", async () => {
  const tenant = await createTenant();
  const page = (await tenant.browser.pages())[0] ?? (await tenant.browser.newPage());
  await page.setContent(FORM);
  await page.focus("#field");
  const viewUrl = liveUrlFor(tenant.cdpUrl, "view")!;
  expect(viewUrl).not.toBe(tenant.liveUrl);

  const { page: live, errors } = await openLive(viewUrl);
  await eventually(async () => ((await statusOf(live)) === "Live" ? true : undefined), 15_000, "the view to be live");
  expect(await live.$eval("#control", (b) => (b as HTMLElement).hidden)).toBe(true);

  // Input sent anyway over the view-only socket is dropped; the same over the control socket arrives.
  const socketOf = (url: string) => new WebSocket(`${url.replace(/^http/, "ws")}/ws`);
  const intruder = socketOf(viewUrl);
  await new Promise((resolve) => intruder.once("message", resolve));
  intruder.send(JSON.stringify({ type: "text", text: "intruder" }));
  intruder.send(JSON.stringify({ type: "mouse", action: "down", x: 280, y: 180 }));
  intruder.send(JSON.stringify({ type: "mouse", action: "up", x: 280, y: 180 }));
  await new Promise((r) => setTimeout(r, 500));
  const owner = socketOf(tenant.liveUrl);
  // Once the owner's view follows the page (its first frame), its input has a page to go to.
  await new Promise<void>((resolve) =>
    owner.on("message", (m) => JSON.parse(m.toString()).type === "frame" && resolve()),
  );
  owner.send(JSON.stringify({ type: "text", text: "owner" }));
  await eventually(async () => ((await page.$eval("#field", (i) => (i as HTMLInputElement).value)) ? true : undefined));
  expect(await page.$eval("#field", (i) => (i as HTMLInputElement).value)).toBe("owner");
  expect(await page.$eval("#press", (b) => b.textContent)).toBe("Press");
  intruder.close();
  owner.close();

  const wrong = await fetch(`${tenant.liveUrl.slice(0, -4)}AAAA`);
  expect(wrong.status).toBe(404);
  const refused = await new Promise<number>((resolve) => {
    const socket = socketOf(`${tenant.liveUrl.slice(0, -4)}AAAA`);
    socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    socket.on("error", () => undefined);
  });
  expect(refused).toBe(404);
  expect(errors).toEqual([]);
  await live.close();
  await tenant.browser.disconnect();
  await h.client.stopBrowser({ projectId: project, browserId: tenant.id });
}, 90_000);

test("a browser has at most MAX_LIVE_VIEWERS viewers at once; the next is told so, and a place frees when one leaves", async () => {
  const tenant = await createTenant();
  const viewUrl = liveUrlFor(tenant.cdpUrl, "view")!;
  const open = () =>
    new Promise<{ socket: WebSocket; status: number }>((resolve) => {
      const socket = new WebSocket(`${viewUrl.replace(/^http/, "ws")}/ws`);
      socket.once("message", () => resolve({ socket, status: 101 }));
      socket.on("unexpected-response", (_req, res) => resolve({ socket, status: res.statusCode ?? 0 }));
      socket.on("error", () => undefined);
    });
  const viewers = [];
  for (let i = 0; i < MAX_LIVE_VIEWERS; i++) viewers.push(await open());
  expect(viewers.map((v) => v.status)).toEqual(Array(MAX_LIVE_VIEWERS).fill(101));
  expect((await open()).status).toBe(429);
  viewers.pop()!.socket.close();
  await eventually(async () => ((await open()).status === 101 ? true : undefined), 5_000, "a freed place");
  for (const v of viewers) v.socket.close();
  await tenant.browser.disconnect();
  await h.client.stopBrowser({ projectId: project, browserId: tenant.id });
}, 60_000);
