/**
 * What recording and the live view cost: CPU of a 1280×720 browser that records (`enableRecording`), and of one that
 * records with a live viewer attached, against one with neither, on a still page and on a page that changes ten times
 * a second (issue 53's target: recorded and watched ≤ 1.5× neither). Counted, from /proc, one browser at a time: the
 * browser's Chromium processes, the ffmpeg encoding its recording, and the browser-pool and gateway processes
 * (screencast frames pass through them). Browser-pool and the gateway run as their own processes
 * (`bench/browsers/stack.ts`). `npx tsx bench/recording-cpu.ts` (BENCH_SECONDS=20).
 */
import puppeteer from "puppeteer-core";
import WebSocket from "ws";
import {
  findProcessesByArgPrefix,
  processGroupOf,
  processTree,
} from "../services/browser-pool/src/adapters/local/proc-fs";
import { startBrowserStack } from "./browsers/stack";
import { cpuSeconds } from "./support/cpu";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);

const STILL = `<body style="margin:0;font:48px sans-serif"><h1>A page that does not change</h1></body>`;
const BUSY = `<body style="margin:0;font:160px sans-serif"><span id="n">0</span>
<script>let n = 0; setInterval(() => { document.getElementById("n").textContent = ++n; }, 100);</script></body>`;

/** A live viewer on the browser's live view, as the page at liveUrl opens it; it holds every frame it gets. */
function watch(liveUrl: string): Promise<WebSocket> {
  const socket = new WebSocket(`${liveUrl.replace(/^http/, "ws")}/ws`);
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve(socket));
    socket.once("error", reject);
  });
}

async function main() {
  const stack = await startBrowserStack();
  try {
    await stack.startPool({ WARM_POOL_SIZE: "0" });
    const poolPid = stack.poolPid()!;
    const gatewayPid = stack.gatewayPid()!;

    /**
     * The processes that work for browser `id`: its Chromium, its recording's ffmpeg, browser-pool and the gateway
     * (the live view's frames pass through both; with no viewer the gateway idles).
     */
    async function processesOf(id: string): Promise<Record<string, number[]>> {
      const [chromium] = await findProcessesByArgPrefix(`--user-data-dir=${stack.dataDir}/${id}`);
      const group = chromium && (await processGroupOf(chromium.pid));
      const encoders = await findProcessesByArgPrefix(`${stack.dataDir}/.recordings/${id}`);
      return {
        // Everything the browser started, from its sandbox down (crash-report handlers leave its process group).
        chromium: group ? await processTree(group) : [],
        ffmpeg: encoders.map((p) => p.pid),
        pool: [poolPid],
        gateway: [gatewayPid],
      };
    }

    /** CPU (% of one core) of each part and in all; `watched`: a live viewer is attached meanwhile. */
    async function measure(record: boolean, content: string, watched = false): Promise<Record<string, number>> {
      const created = await stack.request("POST", "/api/v4/browsers", {
        browserScreenWidth: 1280,
        browserScreenHeight: 720,
        enableRecording: record,
      });
      const viewer = watched ? await watch(created.liveUrl) : undefined;
      const browser = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl, defaultViewport: null });
      const [page] = await browser.pages();
      await page.setContent(content);
      await browser.disconnect();
      await new Promise((r) => setTimeout(r, 3_000)); // settled: first paint and recording start are over
      const parts = Object.entries(await processesOf(created.id));
      const sample = () =>
        Promise.all(
          parts.map(async ([, pids]) => (await Promise.all(pids.map(cpuSeconds))).reduce((a, b) => a + b, 0)),
        );
      const before = await sample();
      await new Promise((r) => setTimeout(r, SECONDS * 1000));
      const after = await sample();
      viewer?.close();
      await stack.request("PATCH", `/api/v4/browsers/${created.id}`, { action: "stop" });
      const used = Object.fromEntries(parts.map(([name], i) => [name, ((after[i] - before[i]) / SECONDS) * 100]));
      return { ...used, all: Object.values(used).reduce((a, b) => a + b, 0) };
    }
    const show = (cpu: Record<string, number>) =>
      `${cpu.all.toFixed(2)} (Chromium ${cpu.chromium.toFixed(2)}, ffmpeg ${cpu.ffmpeg.toFixed(2)}, pool ${cpu.pool.toFixed(2)}, ` +
      `gateway ${cpu.gateway.toFixed(2)})`;

    const ratio = (a: Record<string, number>, b: Record<string, number>) => a.all / Math.max(b.all, 0.01);
    for (const [name, content] of [
      ["still page", STILL],
      ["page changing 10×/s", BUSY],
    ] as const) {
      const plain = await measure(false, content);
      const recorded = await measure(true, content);
      const watched = await measure(true, content, true);
      console.log(`${name}, CPU in % of one core:`);
      console.log(`  neither                     ${show(plain)}`);
      console.log(`  recorded                    ${show(recorded)}  ${ratio(recorded, plain).toFixed(2)}x`);
      console.log(`  recorded, a viewer attached ${show(watched)}  ${ratio(watched, plain).toFixed(2)}x`);
      const met = ratio(watched, plain) <= 1.5;
      console.log(`  target: recorded and watched ≤ 1.5x neither: ${met ? "PASS" : "MISS"}`);
    }
  } finally {
    await stack.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
