/**
 * What Chromium's screencast (the capture behind recordings and the live view) costs by itself: CPU of one headless
 * Chromium (1280×720, its whole process tree) on a page that changes ten times a second, without a screencast and
 * with one at several frame sizes, JPEG qualities and rates. Shows which knob a cheaper capture could turn: issue 53
 * asks for recording + live view ≤ 1.5× the browser without them. `npx tsx bench/screencast-cost.ts` (BENCH_SECONDS=8).
 */
import { readFile } from "node:fs/promises";
import { findChromium } from "@bas/embedded-infra";
import puppeteer from "puppeteer-core";
import { CHROMIUM_ARGS } from "../test/support/chromium";
import { cpuSeconds } from "./support/cpu";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const BUSY = `<body style="margin:0;font:160px sans-serif"><span id="n">0</span>
<script>let n = 0; setInterval(() => { document.getElementById("n").textContent = ++n; }, 100);</script></body>`;

/** `pid` and every process below it. */
async function processTree(pid: number): Promise<number[]> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
  const below = await Promise.all(
    children
      .split(/\s+/)
      .filter(Boolean)
      .map((c) => processTree(Number(c))),
  );
  return [pid, ...below.flat()];
}

interface Capture {
  name: string;
  /** Page.startScreencast's parameters; none: no screencast. */
  params?: { quality: number; maxWidth: number; maxHeight: number; everyNthFrame?: number };
  /** How long after a frame it is acknowledged (the recorder waits 100 ms). */
  ackMs?: number;
}

const CAPTURES: Capture[] = [
  { name: "no screencast" },
  { name: "1280×720 q60 (the recorder)", params: { quality: 60, maxWidth: 1280, maxHeight: 720 }, ackMs: 100 },
  { name: "1280×720 q30", params: { quality: 30, maxWidth: 1280, maxHeight: 720 }, ackMs: 100 },
  { name: "1280×720 q60, ack after 200 ms", params: { quality: 60, maxWidth: 1280, maxHeight: 720 }, ackMs: 200 },
  { name: "1280×720 q60, every 2nd frame", params: { quality: 60, maxWidth: 1280, maxHeight: 720, everyNthFrame: 2 } },
  { name: "960×540 q60", params: { quality: 60, maxWidth: 960, maxHeight: 540 }, ackMs: 100 },
  { name: "640×360 q60", params: { quality: 60, maxWidth: 640, maxHeight: 360 }, ackMs: 100 },
  { name: "640×360 q60, every 2nd frame", params: { quality: 60, maxWidth: 640, maxHeight: 360, everyNthFrame: 2 } },
  { name: "320×180 q60", params: { quality: 60, maxWidth: 320, maxHeight: 180 }, ackMs: 100 },
];

async function measure(capture: Capture): Promise<{ cpu: number; fps: number }> {
  const browser = await puppeteer.launch({
    executablePath: findChromium(),
    headless: true,
    defaultViewport: null,
    args: [...CHROMIUM_ARGS, "--window-size=1280,720"],
  });
  try {
    const [page] = await browser.pages();
    await page.setContent(BUSY);
    const cdp = await page.createCDPSession();
    let frames = 0;
    if (capture.params) {
      cdp.on("Page.screencastFrame", ({ sessionId }) => {
        frames++;
        const ack = () => cdp.send("Page.screencastFrameAck", { sessionId }).catch(() => undefined);
        setTimeout(ack, capture.ackMs ?? 0);
      });
      await cdp.send("Page.startScreencast", { format: "jpeg", ...capture.params });
    }
    await new Promise((r) => setTimeout(r, 2_000)); // the first paint and the screencast's start are over
    const pids = await processTree(browser.process()!.pid!);
    const used = async () => (await Promise.all(pids.map(cpuSeconds))).reduce((a, b) => a + b, 0);
    const before = await used();
    frames = 0;
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    return { cpu: (((await used()) - before) / SECONDS) * 100, fps: frames / SECONDS };
  } finally {
    await browser.close();
  }
}

async function main() {
  console.log(`Chromium's CPU (% of one core) on a page changing 10×/s, ${SECONDS} s each`);
  let base: number | undefined;
  for (const capture of CAPTURES) {
    const { cpu, fps } = await measure(capture);
    base ??= cpu;
    console.log(
      `  ${capture.name.padEnd(32)} ${cpu.toFixed(1).padStart(5)} %  ${(cpu / base).toFixed(2)}×  ${fps.toFixed(1)} frames/s`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
