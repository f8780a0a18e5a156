/**
 * What an idle browser costs, by Chromium build and launch flags, through browser-pool as deployed (its sandbox, its
 * flags): PSS and processes of everything each browser started (`processTree`: the crash-report handlers that leave
 * the process group included), 4 idle browsers per variant, after they settle. Each variant must still do what
 * clients and our own features need: load a page through the egress proxy, screencast (live view, recordings), open
 * a client's new page at the window size set over CDP (how a warm browser is fitted), and refuse file:// (by policy, or
 * in the headless shell, which reads none, by browser-pool's guard).
 * Ratios are against full Chromium in headless mode with our flags as they were before the omnibox's WebUI, the
 * spare renderer and ANGLE's image block were turned off, measured in the same run. Run it with nothing else on the
 * machine: PSS splits shared pages among all the processes that map them, so other browsers lower every figure. For
 * the same reason the last figures are what one more idle browser adds, as shipped and with the services in the
 * browser process: the PSS of all of 4 browsers, then of 12, the difference per browser added; this sizes a machine.
 * `npx tsx bench/browser-memory.ts` (BENCH_BROWSERS=4).
 */
import { existsSync } from "node:fs";
import puppeteer from "puppeteer-core";
import { startTestSite } from "../services/browser-pool/test/support/test-site";
import { DISABLED_FEATURES } from "../services/browser-pool/src/adapters/chromium-features";
import { treeMemory } from "../services/browser-pool/src/adapters/local/proc-fs";
import { browserRoot } from "./browsers/measures";
import { type BrowserStack, startBrowserStack } from "./browsers/stack";

const BROWSERS = Number(process.env.BENCH_BROWSERS ?? 4);
const FULL = "/usr/bin/chromium";
const SHELL = "/usr/bin/chromium-headless-shell";
/** Features we turned off, by when: the omnibox's WebUI popups, then the spare renderer. */
const SPARE = "SpareRendererForSitePerProcess";
const OFF_WITH_SPARE = DISABLED_FEATURES.filter((f) => f !== SPARE);
const OFF_BEFORE = OFF_WITH_SPARE.filter((f) => !f.startsWith("WebUIOmnibox"));
/** A later `--disable-features` replaces ours. */
const offOnly = (features: string[]) => `--disable-features=${features.join(",")}`;
/** ANGLE's 8 MiB block for WebGL's images, as before the twenty-fourth session: an empty list replaces ours. */
const ANGLE_BLOCK = "--disable-angle-features=";

interface Variant {
  name: string;
  env: Record<string, string>;
}

/** Debian's chromium-headless-shell (`npm run setup` installs it on Debian), when this machine has it. */
const SHELL_VARIANTS: Variant[] = [
  { name: "chromium-headless-shell, our flags", env: { CHROMIUM_PATH: SHELL } },
  {
    name: "chromium-headless-shell, CHROMIUM_ISOLATED_SERVICES=false",
    env: { CHROMIUM_PATH: SHELL, CHROMIUM_ISOLATED_SERVICES: "false" },
  },
];

const VARIANTS: Variant[] = [
  {
    name: "chromium, omnibox WebUI preloaded (before)",
    env: { CHROMIUM_PATH: FULL, CHROMIUM_EXTRA_ARGS: `${offOnly(OFF_BEFORE)} ${ANGLE_BLOCK}` },
  },
  {
    name: "chromium, spare renderer (fourth session)",
    env: { CHROMIUM_PATH: FULL, CHROMIUM_EXTRA_ARGS: `${offOnly(OFF_WITH_SPARE)} ${ANGLE_BLOCK}` },
  },
  {
    name: "chromium, ANGLE's image block (twenty-third session)",
    env: { CHROMIUM_PATH: FULL, CHROMIUM_EXTRA_ARGS: ANGLE_BLOCK },
  },
  { name: "chromium, our flags (as shipped)", env: { CHROMIUM_PATH: FULL } },
  {
    name: "chromium, CHROMIUM_ISOLATED_SERVICES=false",
    env: { CHROMIUM_PATH: FULL, CHROMIUM_ISOLATED_SERVICES: "false" },
  },
  ...(existsSync(SHELL) ? SHELL_VARIANTS : []),
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Loads the page through the browser's proxy and takes one screencast frame: what must keep working. */
async function works(cdpUrl: string, pageUrl: string): Promise<string> {
  const client = await puppeteer.connect({ browserWSEndpoint: cdpUrl, defaultViewport: null });
  try {
    const page = await client.newPage();
    await page.goto(pageUrl);
    const title = await page.title();
    const session = await page.createCDPSession();
    const frame = new Promise<boolean>((resolve) => {
      session.once("Page.screencastFrame", () => resolve(true));
      setTimeout(() => resolve(false), 5_000);
    });
    await session.send("Page.startScreencast", { format: "jpeg", quality: 50 });
    await page.evaluate(() => {
      document.body.style.background = "#abc";
    });
    const screencast = await frame;
    // A warm browser is fitted to a request's window size over CDP; a client's new page must open at that size.
    const { windowId } = await session.send("Browser.getWindowForTarget");
    await session.send("Browser.setWindowBounds", { windowId, bounds: { width: 1024, height: 700 } });
    const fitted = await client.newPage();
    const resized = (await fitted.evaluate(() => window.innerWidth)) === 1024;
    await fitted.close();
    // The host's files are closed to pages by Chromium's URLBlocklist policy (chromium-policy.ts), or in the headless
    // shell, which reads no policies, by browser-pool's guard (cdp/file-url-guard.ts).
    const fileBlocked = await page.goto("file:///etc/hostname").then(
      () => false,
      (err: Error) => /ERR_BLOCKED_BY_ADMINISTRATOR|ERR_ACCESS_DENIED/.test(err.message),
    );
    await page.close();
    return [
      title ? "page ok" : "PAGE FAILED",
      screencast ? "screencast ok" : "SCREENCAST FAILED",
      resized ? "resize ok" : "RESIZE IGNORED",
      fileBlocked ? "file:// blocked" : "FILE:// OPEN",
    ].join(", ");
  } finally {
    await client.disconnect();
  }
}

/** PSS of every process of these browsers, summed (MB), once they have settled. */
async function totalPss(stack: BrowserStack, browsers: Array<{ id: string }>): Promise<number> {
  await sleep(4_000);
  const memory = await Promise.all(browsers.map(async (b) => treeMemory(await browserRoot(stack, b.id))));
  return memory.reduce((sum, m) => sum + (m?.pssBytes ?? 0), 0) / 2 ** 20;
}

/** PSS per browser with `BROWSERS` and with three times as many idle, and what each one added cost. */
async function addedPerBrowser(stack: BrowserStack, env: Record<string, string>) {
  await stack.startPool({ WARM_POOL_SIZE: "0", CHROMIUM_PATH: FULL, ...env });
  const made: Array<{ id: string }> = [];
  const idleAt = async (count: number) => {
    while (made.length < count) made.push(await stack.request("POST", "/api/v4/browsers", {}));
    return totalPss(stack, made);
  };
  try {
    const few = await idleAt(BROWSERS);
    const many = await idleAt(3 * BROWSERS);
    return { few: few / BROWSERS, many: many / (3 * BROWSERS), added: (many - few) / (2 * BROWSERS) };
  } finally {
    for (const b of made) await stack.request("PATCH", `/api/v4/browsers/${b.id}`, { action: "stop" });
  }
}

async function main() {
  const site = await startTestSite();
  const stack = await startBrowserStack(site.host);
  const rows: Record<string, Record<string, unknown>> = {};
  let baseline = 0;
  const cleanup = async () => {
    await stack.close();
    await site.close();
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void cleanup().finally(() => process.exit(130)));
  }
  try {
    for (const variant of VARIANTS) {
      await stack.startPool({ WARM_POOL_SIZE: "0", ...variant.env });
      const made: Array<{ id: string; cdpUrl: string }> = [];
      for (let i = 0; i < BROWSERS; i++) made.push(await stack.request("POST", "/api/v4/browsers", {}));
      const check = await works(made[0].cdpUrl, site.url);
      const pss = (await totalPss(stack, made)) / made.length;
      const processes = (await treeMemory(await browserRoot(stack, made[0].id)))?.processes ?? 0;
      baseline ||= pss;
      rows[variant.name] = {
        "PSS per idle browser (MB)": Number(pss.toFixed(1)),
        "vs baseline": Number((pss / baseline).toFixed(2)),
        processes,
        works: check,
      };
      for (const b of made) await stack.request("PATCH", `/api/v4/browsers/${b.id}`, { action: "stop" });
    }
    console.log(`\nIdle browser memory, ${BROWSERS} browsers per variant (target: ≤ 120 MB PSS)`);
    console.table(rows);
    const f = (mb: number) => mb.toFixed(1);
    const added: Variant[] = [
      { name: "As shipped", env: {} },
      { name: "With CHROMIUM_ISOLATED_SERVICES=false", env: { CHROMIUM_ISOLATED_SERVICES: "false" } },
      ...(existsSync(SHELL) ? SHELL_VARIANTS : []),
    ];
    for (const { name, env } of added) {
      const { few, many, added } = await addedPerBrowser(stack, env);
      console.log(
        `${name}: ${f(few)} MB PSS per browser with ${BROWSERS} idle, ${f(many)} with ${3 * BROWSERS}; ` +
          `each browser added beyond ${BROWSERS} cost ${f(added)} MB (target ≤ 120)`,
      );
    }
  } finally {
    await cleanup();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
