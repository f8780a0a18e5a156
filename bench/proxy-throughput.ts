/**
 * Proxy throughput: a page fetches a 50 MB file from a local site, in a pool browser (every byte through its metering
 * egress proxy) and, as the baseline measured in the same run, in a Chromium launched directly without a proxy.
 * Browser-pool and the gateway run as their own processes (`bench/browsers/stack.ts`).
 * `npx tsx bench/proxy-throughput.ts` (BENCH_MB=50, BENCH_REPEATS=5).
 */
import { createServer } from "node:http";
import puppeteer, { type Page } from "puppeteer-core";
import { launchTestChromium } from "../test/support/chromium";
import { startBrowserStack } from "./browsers/stack";

const MB = Number(process.env.BENCH_MB ?? 50);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);

/** A site with one page and one file of `MB` megabytes. */
async function startSite() {
  const chunk = Buffer.alloc(1024 * 1024, 120);
  const server = createServer((req, res) => {
    if (req.url !== "/file") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<title>bench</title>");
      return;
    }
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": MB * chunk.length });
    let sent = 0;
    const more = () => {
      while (sent < MB) {
        sent++;
        if (!res.write(chunk)) return void res.once("drain", more);
      }
      res.end();
    };
    more();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}`, close: () => server.close() };
}

/** MB/s of the file fetched by the page, the median of `REPEATS`. */
async function throughput(page: Page, url: string): Promise<number> {
  await page.goto(url);
  const rates: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const ms = await page.evaluate(async () => {
      const started = performance.now();
      const body = await (await fetch("/file", { cache: "no-store" })).arrayBuffer();
      if (body.byteLength === 0) throw new Error("empty download");
      return performance.now() - started;
    });
    rates.push(MB / (ms / 1000));
  }
  return rates.sort((a, b) => a - b)[Math.floor(rates.length / 2)];
}

async function main() {
  const site = await startSite();
  const stack = await startBrowserStack(site.host);
  const direct = await launchTestChromium();
  try {
    await stack.startPool({ WARM_POOL_SIZE: "0" });
    const created = await stack.request("POST", "/api/v4/browsers", {});
    const browser = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl, defaultViewport: null });
    const viaProxy = await throughput(await browser.newPage(), site.url);
    const baseline = await throughput(await direct.browser.newPage(), site.url);
    console.log(`\n${MB} MB fetched by a page, median of ${REPEATS}`);
    console.table({
      "Chromium direct, no proxy (baseline)": { "MB/s": Number(baseline.toFixed(0)) },
      "pool browser, through its metering proxy": { "MB/s": Number(viaProxy.toFixed(0)) },
    });
    console.log(`through the proxy / direct: ${(viaProxy / baseline).toFixed(2)}×`);
    await browser.disconnect();
    await stack.request("PATCH", `/api/v4/browsers/${created.id}`, { action: "stop" });
  } finally {
    await direct.close();
    await stack.close();
    site.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
