import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { createNatsEventStore } from "@bas/event-store";
import { sql } from "kysely";
import { BROWSERS_TABLE } from "../src/adapters/pg/browsers-projection";
import puppeteer from "puppeteer-core";
import { status } from "@grpc/grpc-js";
import type { BrowserDriver } from "../src/domain/browser-driver";
import { commandLineOf, findProcessesByArgPrefix, processGroupOf, processTree } from "../src/adapters/local/proc-fs";
import { handshake } from "./support/cdp-handshake";
import { eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";
import { startTestSite, TEST_PAGE_TITLE } from "./support/test-site";

let h: PoolHarness;
let site: Awaited<ReturnType<typeof startTestSite>>;
const project = randomUUID();

/** A launch a test holds back: `started` has the browser's id once its launch began; it goes on once `go` is called. */
let heldLaunch: { started: (id: string) => void; go: Promise<void> } | undefined;
const holdingLaunches = (driver: BrowserDriver): BrowserDriver => ({
  ...driver,
  async launch(spec) {
    const held = heldLaunch;
    heldLaunch = undefined;
    held?.started(spec.browserId);
    await held?.go;
    return driver.launch(spec);
  },
});

beforeAll(async () => {
  site = await startTestSite();
  h = await startPoolHarness({ BROWSER_EGRESS_ALLOW: site.host }, { wrapDriver: holdingLaunches });
});
afterAll(async () => {
  await h?.close();
  await site?.close();
});

/**
 * Runs `act` while the read model cannot apply anything (its table locked against writes; reads go on), and holds it
 * 300 ms more, so that reads `act` started must wait for the read model to show what was answered.
 */
async function whileReadModelHeld(act: () => Promise<void>) {
  await h.infra.db.transaction().execute(async (trx) => {
    await sql`lock table ${sql.table(BROWSERS_TABLE)} in exclusive mode`.execute(trx);
    await act();
    await new Promise((resolve) => setTimeout(resolve, 300));
  });
}

/** What a read answered, or why it was refused. */
const seen = (read: Promise<unknown>) => read.then(String, (err: Error) => `refused: ${err.message}`);

const stoppedWith = (browserId: string, reason: string) =>
  eventually(
    async () => {
      const b = await h.client.getBrowser({ projectId: project, browserId });
      return b.status === "stopped" && b.stopReason === reason ? b : undefined;
    },
    15_000,
    `browser stopped (${reason})`,
  );

test("a browser whose timeout elapses stops by itself, with finishedAt, and its Chromium ends", async () => {
  const created = await h.client.createBrowser({
    projectId: project,
    settings: undefined,
    timeoutMinutes: 1,
    metadata: {},
  });
  // Counted from the request; the launch takes a moment of it.
  const lifetime = created.timeoutAt!.getTime() - created.startedAt!.getTime();
  expect(lifetime).toBeGreaterThan(50_000);
  expect(lifetime).toBeLessThanOrEqual(60_000);
  h.clock.advance(61_000);
  const stopped = await stoppedWith(created.id, "timeout");
  expect(stopped.finishedAt!.getTime()).toBeGreaterThanOrEqual(created.timeoutAt!.getTime());
  await eventually(async () => ((await h.chromiumIds()).includes(created.id) ? undefined : true), 10_000);
});

test("a browser stopped through another node is torn down on its own node at once", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "bas-bp-other-"));
  const other = await startPoolHarness({}, {}, { infra: h.infra, dataDir });
  try {
    const created = await other.client.createBrowser({
      projectId: project,
      settings: undefined,
      timeoutMinutes: 0,
      metadata: {},
    });
    expect(await other.chromiumIds()).toContain(created.id);
    await h.client.stopBrowser({ projectId: project, browserId: created.id });
    await eventually(async () => ((await other.chromiumIds()).includes(created.id) ? undefined : true), 10_000);
  } finally {
    await other.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/**
 * The kinds of process Chromium says a new browser of this pool runs (SystemInfo.getProcessInfo), once those of
 * `awaited` are among them (it lists a process once it has its pid: some can still be starting); fails if they never
 * are. With each kind, whether the host sees a seccomp filter on it (`Seccomp: 2` in /proc/<pid>/status), which
 * Chromium's sandbox puts on every process it sandboxes; and the GPU process's large allocations, once a page drew
 * WebGL.
 */
async function processTypes(pool: PoolHarness, awaited: string[]) {
  const created = await pool.client.createBrowser({
    projectId: project,
    settings: undefined,
    timeoutMinutes: 0,
    metadata: {},
  });
  const client = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl, defaultViewport: null });
  const session = await client.target().createCDPSession();
  // WebGL, which pages and bot checks use (SwiftShader draws it): a pixel cleared to red reads back red.
  const webgl = await (await client.newPage()).evaluate(() => {
    const gl = document.createElement("canvas").getContext("webgl");
    if (!gl) return "no WebGL";
    gl.clearColor(1, 0, 0, 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    const pixel = new Uint8Array(4);
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, pixel);
    return pixel.join(",");
  });
  const types = await eventually(async () => {
    const { processInfo } = (await session.send("SystemInfo.getProcessInfo")) as {
      processInfo: Array<{ type: string }>;
    };
    const found = processInfo.map((p) => p.type);
    return awaited.every((type) => found.includes(type)) ? found : undefined;
  }, 10_000);
  const [chromium] = await findProcessesByArgPrefix(`--user-data-dir=${pool.dataDir}/${created.id}`);
  const filtered = new Map<string, boolean>();
  let gpuBlocksKb: number[] = [];
  for (const pid of await processTree((await processGroupOf(chromium.pid)) as number)) {
    // Chromium rewrites its children's command lines as one string.
    const command = ((await commandLineOf(pid)) ?? []).join(" ");
    const type = /--utility-sub-type=(\S+)/.exec(command)?.[1] ?? /--type=(\S+)/.exec(command)?.[1];
    // Of the zygotes, the one for processes that sandbox themselves later (the GPU process) says --no-zygote-sandbox.
    const kind = type === "zygote" && command.includes("--no-zygote-sandbox") ? "unsandboxed-zygote" : type;
    const seccomp = /^Seccomp:\s*(\d)/m.exec(await readFile(`/proc/${pid}/status`, "utf8").catch(() => ""))?.[1];
    if (kind) filtered.set(kind, seccomp === "2");
    if (kind === "gpu-process") gpuBlocksKb = await largeAnonymousBlocksKb(pid);
  }
  await client.disconnect();
  await pool.client.stopBrowser({ projectId: project, browserId: created.id });
  return { types, filtered, webgl, gpuBlocksKb };
}

/**
 * The private memory (KB) of each anonymous mapping of a process that holds 4 MB or more: its large allocations. None
 * when the host may not read them (a process Chromium's sandbox made undumpable, for a test run as another user).
 */
async function largeAnonymousBlocksKb(pid: number): Promise<number[]> {
  const blocks: number[] = [];
  let anonymous = false;
  for (const line of (await readFile(`/proc/${pid}/smaps`, "utf8").catch(() => "")).split("\n")) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) anonymous = mapping[1] === "";
    const dirty = /^Private_Dirty:\s+(\d+)/.exec(line);
    if (anonymous && dirty && Number(dirty[1]) >= 4096) blocks.push(Number(dirty[1]));
  }
  return blocks;
}

test("a browser's network service runs sandboxed and its GPU in a process of its own, whose one large allocation is the window's frame; or both inside its browser process with CHROMIUM_ISOLATED_SERVICES=false, with no zygote for them", async () => {
  // Waited for (a timeout if they never come): the isolated browser's GPU and network service, the page's renderer.
  const isolated = await processTypes(h, ["renderer", "GPU", "network.mojom.NetworkService"]);
  // Chromium on Linux leaves its network service unsandboxed unless told (NetworkServiceSandbox).
  expect(isolated.filtered.get("network.mojom.NetworkService")).toBe(true);
  expect(isolated.filtered.get("renderer")).toBe(true);
  expect(isolated.webgl).toBe("255,0,0,255");
  // The GPU process's one large allocation is the window's frame (1920x1080, 4 bytes a pixel, within 50 KB), even
  // after WebGL drew: no 8 MiB block of ANGLE's for images (ANGLE_FEATURES_ARG).
  expect(isolated.gpuBlocksKb).toHaveLength(1);
  expect(isolated.gpuBlocksKb[0]).toBeCloseTo((1920 * 1080 * 4) / 1024, -2);
  expect(isolated.filtered.has("unsandboxed-zygote")).toBe(true);
  const lean = await startPoolHarness(
    { BROWSER_EGRESS_ALLOW: site.host, CHROMIUM_ISOLATED_SERVICES: "false", WARM_POOL_SIZE: "0" },
    {},
    { infra: h.infra, dataDir: mkdtempSync(join(tmpdir(), "bas-bp-lean-")) },
  );
  try {
    const together = await processTypes(lean, ["renderer"]);
    expect(together.types.filter((type) => type === "GPU" || type.startsWith("network."))).toEqual([]);
    // Nor the zygote the GPU process is forked from, which would be idle (15 MB of every browser).
    expect(together.filtered.has("unsandboxed-zygote")).toBe(false);
    expect(together.webgl).toBe("255,0,0,255");
  } finally {
    await lean.close();
    rmSync(lean.dataDir, { recursive: true, force: true });
  }
});

test("with CHROMIUM_GPU_SANDBOX=true the GPU process is sandboxed as well, and pages get no WebGL", async () => {
  const strict = await startPoolHarness(
    { BROWSER_EGRESS_ALLOW: site.host, CHROMIUM_GPU_SANDBOX: "true", WARM_POOL_SIZE: "0" },
    {},
    { infra: h.infra, dataDir: mkdtempSync(join(tmpdir(), "bas-bp-gpu-")) },
  );
  try {
    const sandboxed = await processTypes(strict, ["renderer", "GPU", "network.mojom.NetworkService"]);
    expect(sandboxed.filtered.get("gpu-process")).toBe(true);
    expect(sandboxed.filtered.get("network.mojom.NetworkService")).toBe(true);
    expect(sandboxed.webgl).toBe("no WebGL");
  } finally {
    await strict.close();
    rmSync(strict.dataDir, { recursive: true, force: true });
  }
});

test("a stop ends every process the browser started, the crash-report handlers that leave its group included; the answer says stopped at once, and so does a read right after", async () => {
  const created = await h.client.createBrowser({
    projectId: project,
    settings: undefined,
    timeoutMinutes: 0,
    metadata: {},
  });
  const [chromium] = await findProcessesByArgPrefix(`--user-data-dir=${h.dataDir}/${created.id}`);
  const root = (await processGroupOf(chromium.pid))!;
  const tree = await processTree(root);
  const groups = await Promise.all(tree.map((pid) => processGroupOf(pid)));
  const commands = await Promise.all(tree.map(async (pid) => (await commandLineOf(pid))?.join(" ") ?? ""));
  // What a process-group count would miss: Chromium's crash-report handlers start sessions of their own.
  expect(commands.some((c) => c.includes("crashpad"))).toBe(true);
  expect(groups.some((g) => g !== root)).toBe(true);

  let stopped!: Awaited<ReturnType<typeof h.client.stopBrowser>>;
  let read!: Promise<string>;
  await whileReadModelHeld(async () => {
    stopped = await h.client.stopBrowser({ projectId: project, browserId: created.id });
    read = seen(h.client.getBrowser({ projectId: project, browserId: created.id }).then((b) => b.status));
  });
  expect(stopped.status).toBe("stopped");
  expect(await read).toBe("stopped");
  await eventually(async () => {
    const alive = await Promise.all(tree.map((pid) => processGroupOf(pid)));
    return alive.every((g) => g === undefined) ? true : undefined;
  }, 10_000);
});

test("a browser takes its fonts from the system's font cache: none is built in its profile, even as a page renders text", async () => {
  expect(existsSync("/var/cache/fontconfig")).toBe(true);
  const created = await h.client.createBrowser({
    projectId: project,
    settings: undefined,
    timeoutMinutes: 0,
    metadata: {},
  });
  const client = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl, defaultViewport: null });
  const page = await client.newPage();
  await page.goto(site.url);
  await client.disconnect();
  expect(existsSync(join(h.dataDir, created.id, ".cache", "fontconfig"))).toBe(false);
  await h.client.stopBrowser({ projectId: project, browserId: created.id });
});

test("a creation is answered while the read model cannot take it in; reads right after wait for it and show the browser", async () => {
  const own = randomUUID();
  let created!: Awaited<ReturnType<typeof h.client.createBrowser>>;
  let read!: Promise<string>;
  let listed!: Promise<string>;
  await whileReadModelHeld(async () => {
    created = await h.client.createBrowser({ projectId: own, settings: undefined, timeoutMinutes: 0, metadata: {} });
    read = seen(h.client.getBrowser({ projectId: own, browserId: created.id }).then((b) => b.status));
    listed = seen(h.client.listBrowsers({ projectId: own, pageNumber: 1, pageSize: 10 }).then((l) => l.items[0]?.id));
  });
  expect(created.status).toBe("active");
  expect(await read).toBe("active");
  expect(await listed).toBe(created.id);
  await h.client.stopBrowser({ projectId: own, browserId: created.id });
});

test("a create whose caller stopped waiting during the launch leaves no browser running: it is recorded stopped by its caller", async () => {
  let go!: () => void;
  const launching = new Promise<string>((started) => {
    heldLaunch = { started, go: new Promise<void>((resolve) => (go = resolve)) };
  });
  const caller = new AbortController();
  const created = h.client.createBrowser(
    { projectId: project, settings: undefined, timeoutMinutes: 0, metadata: {} },
    { signal: caller.signal },
  );
  const id = await launching;
  caller.abort();
  await expect(created).rejects.toMatchObject({ code: status.CANCELLED });
  go();
  // Until the create has gone on past the launch, the read model may not show the browser yet (NOT_FOUND): its id
  // was never answered to anybody.
  const stopped = await eventually(
    async () => {
      const b = await h.client
        .getBrowser({ projectId: project, browserId: id })
        .catch((err) => (err.code === status.NOT_FOUND ? undefined : Promise.reject(err)));
      return b?.status === "stopped" ? b : undefined;
    },
    15_000,
    "browser stopped",
  );
  expect(stopped).toMatchObject({ stopReason: "caller", finishedAt: expect.any(Date) });
  // Its Chromium was started and ended: nothing of it is left to hold a slot of the project's limit.
  await eventually(async () => ((await h.chromiumIds()).includes(id) ? undefined : true), 10_000);
  const { items } = await h.client.listBrowsers({ projectId: project, pageNumber: 1, pageSize: 100, status: "active" });
  expect(items.map((b) => b.id)).not.toContain(id);
});

test("a browser whose Chromium dies is recorded stopped with reason crash", async () => {
  const created = await h.client.createBrowser({
    projectId: project,
    settings: undefined,
    timeoutMinutes: 0,
    metadata: {},
  });
  const [process0] = await findProcessesByArgPrefix(`--user-data-dir=${h.dataDir}/${created.id}`);
  const group = await processGroupOf(process0.pid);
  process.kill(-group!, "SIGKILL");
  const stopped = await stoppedWith(created.id, "crash");
  expect(stopped.finishedAt).toBeInstanceOf(Date);
  await eventually(async () => ((await handshake(created.cdpUrl)) === 404 ? true : undefined), 5_000);
});

test("acquire is idempotent per session, its internal URL works, release stops it (session_ended)", async () => {
  const sessionId = randomUUID();
  const settings = { proxyCountryCode: "us", screenWidth: 1280, screenHeight: 800, allowedDomains: [], record: false };
  const first = await h.client.acquireBrowser({ projectId: project, sessionId, settings });
  const second = await h.client.acquireBrowser({ projectId: project, sessionId, settings });
  expect(second.browser!.id).toBe(first.browser!.id);
  expect(first.browser!.agentSessionId).toBe(sessionId);
  expect(second.internalCdpUrl).toBe(first.internalCdpUrl);

  const client = await puppeteer.connect({ browserWSEndpoint: first.internalCdpUrl, defaultViewport: null });
  const page = await client.newPage();
  await page.goto(site.url);
  expect(await page.title()).toBe(TEST_PAGE_TITLE);
  // The window fills a screen of the size asked for (headless Chromium's own screen is 800x600).
  expect(await page.evaluate(() => [screenX, screenY, outerWidth, outerHeight, screen.width, screen.height])).toEqual([
    0, 0, 1280, 800, 1280, 800,
  ]);
  await client.disconnect();

  const released = await h.client.releaseBrowser({ projectId: project, sessionId });
  expect(released).toMatchObject({ id: first.browser!.id, status: "stopped", stopReason: "session_ended" });
  const again = await h.client.releaseBrowser({ projectId: project, sessionId });
  expect(again.status).toBe("stopped");
  const next = await h.client.acquireBrowser({ projectId: project, sessionId, settings });
  expect(next.browser!.id).not.toBe(first.browser!.id);
  expect(next.browser!.status).toBe("active");

  // The session's browsers are listed apart from the project's others, and by status.
  const listed = async (filter: { sessionId?: string; status?: string }) =>
    (await h.client.listBrowsers({ projectId: project, pageNumber: 1, pageSize: 100, ...filter })).items.map(
      (b) => b.id,
    );
  expect(await listed({ sessionId })).toEqual([next.browser!.id, first.browser!.id]);
  expect(await listed({ sessionId, status: "active" })).toEqual([next.browser!.id]);
  expect(await listed({ sessionId, status: "stopped" })).toEqual([first.browser!.id]);
  expect(await listed({ sessionId: randomUUID() })).toEqual([]);
  const everyActive = await listed({ status: "active" });
  expect(everyActive).toContain(next.browser!.id);
  expect(everyActive).not.toContain(first.browser!.id);
  await expect(listed({ status: "paused" })).rejects.toMatchObject({ kind: "invalid_argument" });
  await h.client.releaseBrowser({ projectId: project, sessionId });
});

test.each([
  ["SessionStopped", { reason: "user" }],
  ["SessionTimedOut", { inactiveSince: new Date().toISOString() }],
  ["SandboxFailed", { error: "boom" }],
  ["SessionDeleted", {}],
])("the session's %s event stops its browser with reason session_ended", async (type, data) => {
  const sessionId = randomUUID();
  const { browser } = await h.client.acquireBrowser({ projectId: project, sessionId, settings: undefined });
  const store = createNatsEventStore(h.infra);
  await store.append({ type: "session", id: sessionId }, [{ type, data }], 0);
  await stoppedWith(browser!.id, "session_ended");
});

test("metadata and settings are kept; the list is newest first and paged", async () => {
  const other = randomUUID();
  const made = [];
  for (const n of [1, 2, 3]) {
    made.push(
      await h.client.createBrowser({
        projectId: other,
        settings: {
          proxyCountryCode: undefined,
          screenWidth: 1024,
          screenHeight: 768,
          allowedDomains: [],
          record: false,
        },
        timeoutMinutes: 5,
        metadata: { n: String(n), team: "qa" },
      }),
    );
  }
  const page1 = await h.client.listBrowsers({ projectId: other, pageNumber: 1, pageSize: 2 });
  const page2 = await h.client.listBrowsers({ projectId: other, pageNumber: 2, pageSize: 2 });
  expect(page1.totalItems).toBe(3);
  expect(page1.items.map((b) => b.metadata.n)).toEqual(["3", "2"]);
  expect(page2.items.map((b) => b.metadata.n)).toEqual(["1"]);
  expect(page2).toMatchObject({ pageNumber: 2, pageSize: 2, totalItems: 3 });
  expect(page1.items[0].settings).toMatchObject({ screenWidth: 1024, screenHeight: 768 });
  expect(page1.items[0].settings!.proxyCountryCode).toBeUndefined();
  for (const b of made) await h.client.stopBrowser({ projectId: other, browserId: b.id });
});

test("bad input over gRPC is INVALID_ARGUMENT naming the REST field", async () => {
  await expect(
    h.client.createBrowser({ projectId: project, settings: undefined, timeoutMinutes: 241, metadata: {} }),
  ).rejects.toMatchObject({ code: 3, field: ["body", "timeout"] });
  const metadata = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, "v"]));
  await expect(
    h.client.createBrowser({ projectId: project, settings: undefined, timeoutMinutes: 0, metadata }),
  ).rejects.toMatchObject({ code: 3, field: ["body", "metadata"] });
  await expect(
    h.client.createBrowser({
      projectId: project,
      settings: { screenWidth: 100, screenHeight: 600, allowedDomains: [], record: false },
      timeoutMinutes: 0,
      metadata: {},
    }),
  ).rejects.toMatchObject({ code: 3, field: ["body", "browserScreenWidth"] });
  await expect(h.client.getBrowser({ projectId: project, browserId: "not-a-uuid" })).rejects.toMatchObject({ code: 5 });
});
