import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer from "puppeteer-core";
import { eventually, startPoolHarness } from "./support/pool-harness";
import { type RestStack, startRestStack } from "./support/rest-stack";
import { startTestSite } from "./support/test-site";

/** Recordings as a caller gets them: `enableRecording`, then an MP4 behind `recordingUrl` once the browser stopped. */
let stack: RestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let key: string;
let dir: string;

beforeAll(async () => {
  site = await startTestSite();
  stack = await startRestStack({ BROWSER_EGRESS_ALLOW: site.host });
  key = await stack.newProjectKey();
  dir = await mkdtemp(join(tmpdir(), "bas-recording-"));
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await site?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What ffprobe reads in the file: the video stream and how long it lasts. */
function probe(file: string) {
  const out = execFileSync("ffprobe", [
    ...["-v", "error", "-count_frames", "-select_streams", "v:0"],
    ...["-show_entries", "stream=codec_name,width,height,nb_read_frames:format=duration,format_name", "-of", "json"],
    file,
  ]);
  const { streams, format } = JSON.parse(out.toString());
  return {
    codec: streams[0].codec_name as string,
    width: streams[0].width as number,
    height: streams[0].height as number,
    frames: Number(streams[0].nb_read_frames),
    seconds: Number(format.duration),
    format: format.format_name as string,
  };
}

/** Waits for the browser's recording (it is stored after the stop), downloads it and reads it with ffprobe. */
async function recordingOf(browserId: string) {
  const read = await eventually(async () => {
    const r = await stack.request("GET", `/api/v4/browsers/${browserId}`, { key });
    return r.body.recordingUrl ? r : undefined;
  }, 60_000);
  expect(read.body.recordingUrl).toMatch(/\/blobs\/recording-[0-9a-f-]{36}\.mp4\?exp=\d+&sig=/);
  const video = await fetch(read.body.recordingUrl);
  expect(video.status).toBe(200);
  expect(video.headers.get("content-type")).toBe("video/mp4");
  const file = join(dir, `${browserId}.mp4`);
  await writeFile(file, Buffer.from(await video.arrayBuffer()));
  return probe(file);
}

/**
 * From the browser's start to its stop as recorded. The recording runs from a moment after the start is recorded to
 * a moment after the stop is, so it can come out longer by as much as the stop took to record more than the start:
 * its upper bound is what the test saw instead, from before the create to after the stop's answer.
 */
const lifetimeOf = (view: { startedAt: string; finishedAt: string }) =>
  (Date.parse(view.finishedAt) - Date.parse(view.startedAt)) / 1000;
const secondsSince = (start: number) => (performance.now() - start) / 1000;

test("a recorded browser yields an MP4 as long as the browser ran, showing what happened on its page", async () => {
  const asked = performance.now();
  const created = await stack.request("POST", "/api/v4/browsers", {
    key,
    body: { enableRecording: true, browserScreenWidth: 1280, browserScreenHeight: 720 },
  });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ recordingUrl: null, recordingAvailable: true });
  const browser = await puppeteer.connect({ browserWSEndpoint: created.body.cdpUrl, defaultViewport: null });
  const [page] = await browser.pages();
  await page.goto(site.url);
  // Ten changes a third of a second apart, then the page stays still for two seconds before the stop.
  for (let i = 0; i < 10; i++) {
    await page.evaluate((n) => {
      document.body.style.background = n % 2 ? "#1d4ed8" : "#f59e0b";
      document.querySelector("h1")!.textContent = `change ${n}`;
    }, i);
    await sleep(300);
  }
  await sleep(2_000);
  await browser.disconnect();
  const stopped = await stack.request("PATCH", `/api/v4/browsers/${created.body.id}`, {
    key,
    body: { action: "stop" },
  });
  // Stopped and not yet stored: a client polling for the URL keeps polling.
  expect(stopped.body).toMatchObject({ status: "stopped", recordingAvailable: true });
  const lifetime = lifetimeOf(stopped.body);
  const seen = secondsSince(asked);

  // Encoding and storing follow the stop; the read shows the URL once the MP4 is kept.
  const found = await recordingOf(created.body.id);
  expect(found).toMatchObject({ codec: "h264", width: 1280, height: 720 });
  expect(found.format).toContain("mp4");
  // From the start to the stop (the first picture also stands for the moment before it came).
  expect(found.seconds).toBeGreaterThan(lifetime - 1);
  expect(found.seconds).toBeLessThan(seen + 0.1);
  // The changes are frames (two close ones may share one on a busy machine); the still end is one frame held until
  // the stop, not frames repeated.
  expect(found.frames).toBeGreaterThanOrEqual(5);
  expect(found.frames).toBeLessThan(60);

  // Lists carry it too, and another project cannot read the browser at all.
  const listed = await stack.request("GET", "/api/v4/browsers", { key });
  expect(listed.body.items.find((b: { id: string }) => b.id === created.body.id).recordingUrl).toMatch(/\/blobs\//);
  const stranger = await stack.request("GET", `/api/v4/browsers/${created.body.id}`, {
    key: await stack.newProjectKey(),
  });
  expect(stranger.status).toBe(404);
}, 90_000);

test("a browser on which nothing happens still yields a recording: its one picture, held until the stop", async () => {
  const asked = performance.now();
  const created = await stack.request("POST", "/api/v4/browsers", { key, body: { enableRecording: true } });
  expect(created.status).toBe(201);
  await sleep(2_000);
  const stopped = await stack.request("PATCH", `/api/v4/browsers/${created.body.id}`, {
    key,
    body: { action: "stop" },
  });
  const lifetime = lifetimeOf(stopped.body);
  const seen = secondsSince(asked);
  const found = await recordingOf(created.body.id);
  // The default 1920x1080 screen, scaled to fit 1280x720.
  expect(found).toMatchObject({ codec: "h264", width: 1280, height: 720 });
  expect(found.frames).toBeLessThanOrEqual(3);
  expect(found.seconds).toBeGreaterThan(lifetime - 1);
  expect(found.seconds).toBeLessThan(seen + 0.1);
}, 60_000);

test("a browser without enableRecording is not recorded", async () => {
  const created = await stack.request("POST", "/api/v4/browsers", { key, body: {} });
  expect(created.status).toBe(201);
  const stopped = await stack.request("PATCH", `/api/v4/browsers/${created.body.id}`, {
    key,
    body: { action: "stop" },
  });
  // recordingAvailable false tells a client polling for a recording that none will come.
  expect(created.body.recordingAvailable).toBe(false);
  expect(stopped.body).toMatchObject({ status: "stopped", recordingUrl: null, recordingAvailable: false });
  // A recorded browser's MP4 is there well within this (the tests above): this one has none.
  await sleep(1_500);
  const read = await stack.request("GET", `/api/v4/browsers/${created.body.id}`, { key });
  expect(read.body.recordingUrl).toBeNull();
});

test("without ffmpeg, asking for a recording is refused at creation, saying what to install; other browsers start", async () => {
  const h = await startPoolHarness({ FFMPEG_PATH: "/nonexistent/ffmpeg", WARM_POOL_SIZE: "0" });
  try {
    const project = randomUUID();
    const create = (record: boolean) =>
      h.client.createBrowser({
        projectId: project,
        settings: { proxyCountryCode: "us", screenWidth: 800, screenHeight: 600, allowedDomains: [], record },
        timeoutMinutes: 0,
        metadata: {},
      });
    await expect(create(true)).rejects.toThrow(/ffmpeg was not found.*apt-get install -y ffmpeg.*FFMPEG_PATH/);
    const plain = await create(false);
    expect(plain.status).toBe("active");
    await h.client.stopBrowser({ projectId: project, browserId: plain.id });
  } finally {
    await h.close();
  }
}, 60_000);
