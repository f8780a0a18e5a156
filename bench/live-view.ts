/**
 * The live view of a 1280×720 browser: frame latency (a change on the page → the viewer holds the frame that shows
 * it) and frame rate under a page that animates without pause, through the live view's WebSocket, against the same
 * screencast read directly over CDP (the baseline: what the relay costs). Browser-pool and the gateway run as their
 * own processes (`bench/browsers/stack.ts`). `npx tsx bench/live-view.ts` (BENCH_CHANGES=100, BENCH_SECONDS=5).
 */
import type { CDPSession } from "puppeteer-core";
import puppeteer from "puppeteer-core";
import WebSocket from "ws";
import { startBrowserStack } from "./browsers/stack";
import { ms, summarize } from "./support/stats";

const CHANGES = Number(process.env.BENCH_CHANGES ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

const PAGE = `<body style="margin:0;font:160px sans-serif;display:flex;align-items:center;justify-content:center;height:100vh">
<span id="n">0</span></body>`;

/** A stream of frames: the time each one arrived. */
interface FrameSource {
  arrivals: number[];
  close(): void;
}

function viaLiveView(liveUrl: string): Promise<FrameSource> {
  const arrivals: number[] = [];
  const socket = new WebSocket(`${liveUrl.replace(/^http/, "ws")}/ws`);
  socket.on("message", (data) => {
    if (JSON.parse(data.toString()).type === "frame") arrivals.push(performance.now());
  });
  return new Promise((resolve) => socket.once("open", () => resolve({ arrivals, close: () => socket.close() })));
}

async function viaCdp(session: CDPSession): Promise<FrameSource> {
  const arrivals: number[] = [];
  session.on("Page.screencastFrame", (frame) => {
    arrivals.push(performance.now());
    void session.send("Page.screencastFrameAck", { sessionId: frame.sessionId }).catch(() => undefined);
  });
  await session.send("Page.startScreencast", { format: "jpeg", quality: 70, maxWidth: 1920, maxHeight: 1080 });
  return { arrivals, close: () => void session.send("Page.stopScreencast").catch(() => undefined) };
}

/** Changes the page `CHANGES` times, each once the page is still, and takes the wait for the next frame. */
async function latency(change: (n: number) => Promise<void>, source: FrameSource): Promise<number[]> {
  const samples: number[] = [];
  for (let n = 1; n <= CHANGES; n++) {
    await new Promise((r) => setTimeout(r, 150)); // still: no frame is on its way
    const seen = source.arrivals.length;
    const start = performance.now();
    await change(n);
    const deadline = start + 5_000;
    while (source.arrivals.length === seen && performance.now() < deadline) await new Promise((r) => setImmediate(r));
    if (source.arrivals.length > seen) samples.push(source.arrivals[seen] - start);
  }
  return samples;
}

async function frameRate(source: FrameSource): Promise<number> {
  const from = source.arrivals.length;
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  return (source.arrivals.length - from) / SECONDS;
}

async function main() {
  const stack = await startBrowserStack();
  try {
    await stack.startPool({ WARM_POOL_SIZE: "0" });
    const created = await stack.request("POST", "/api/v4/browsers", {
      browserScreenWidth: 1280,
      browserScreenHeight: 720,
    });
    const browser = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl, defaultViewport: null });
    const page = (await browser.pages())[0] ?? (await browser.newPage());
    await page.setContent(PAGE);
    const change = (n: number) =>
      page.evaluate((v) => {
        document.getElementById("n")!.textContent = String(v);
      }, n);
    // As a string: the bundler would wrap a named inner function in a helper the page does not have.
    const animate = () =>
      page.evaluate(`(function tick() {
        document.getElementById("n").textContent = String(Math.floor(performance.now()));
        requestAnimationFrame(tick);
      })()`);

    const rows: Record<string, Record<string, string | number>> = {};
    const measure = async (name: string, source: FrameSource) => {
      await new Promise((r) => setTimeout(r, 500));
      const s = summarize(await latency(change, source));
      rows[name] = { changes: s.n, "latency p50": ms(s.p50), "latency p99": ms(s.p99) };
      return s;
    };
    const direct = await viaCdp(await page.createCDPSession());
    const base = await measure("CDP screencast, direct (baseline)", direct);
    direct.close();
    const live = await viaLiveView(created.liveUrl);
    const ours = await measure("live view (WebSocket relay)", live);

    // The animation runs for both: the live view's frames first, then the direct ones, on the same page.
    await animate();
    const liveFps = await frameRate(live);
    live.close();
    const directAgain = await viaCdp(await page.createCDPSession());
    await new Promise((r) => setTimeout(r, 500));
    const directFps = await frameRate(directAgain);
    directAgain.close();
    rows["live view (WebSocket relay)"]["frames/s animating"] = Number(liveFps.toFixed(1));
    rows["CDP screencast, direct (baseline)"]["frames/s animating"] = Number(directFps.toFixed(1));

    console.log(`\nlive view of a 1280×720 page: ${CHANGES} changes, ${SECONDS} s of animation`);
    console.table(rows);
    console.log(`latency p50 live / direct: ${(ours.p50 / base.p50).toFixed(2)}×`);
    console.log(`frame rate live / direct: ${(liveFps / directFps).toFixed(2)}×`);
    await browser.disconnect();
    await stack.request("PATCH", `/api/v4/browsers/${created.id}`, { action: "stop" });
  } finally {
    await stack.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
