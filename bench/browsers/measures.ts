import { fork } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findChromium } from "@bas/embedded-infra";
import { chromiumArgs } from "../../services/browser-pool/src/adapters/local/chromium-args";
import { fetchDevtoolsJson } from "../../services/browser-pool/src/adapters/cdp/devtools-json";
import puppeteer from "puppeteer-core";
import {
  findProcessesByArgPrefix,
  treeMemory,
  processGroupOf,
} from "../../services/browser-pool/src/adapters/local/proc-fs";
import { browserSocketsOf } from "../../services/browser-pool/src/adapters/local/local-driver";
import { RELAY_HOST_PROGRAM } from "../../services/browser-pool/src/adapters/local/relay-program";
import { quietMachine } from "../support/quiet";
import { percentile, summarize } from "../support/stats";
import { type CdpClient, openCdp } from "./cdp-client";
import type { BrowserStack } from "./stack";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the pool");
    await sleep(10);
  }
}

/**
 * The pool holds `idle` warm browsers and nothing else, and the machine has gone quiet: the refill's launch and the
 * last browser's tear-down are over, as between a pool's requests.
 */
async function settleAt(stack: BrowserStack, idle: number) {
  await until(async () => {
    const state = await stack.poolState();
    return state.warmIdle === idle && state.browsers === 0 && (await stack.chromiumIds()).length === idle;
  });
  await quietMachine();
}

/**
 * (a) POST /api/v4/browsers until the first CDP command through cdpUrl is answered; and the stop call's latency.
 * Warm: the pool holds `idle` browsers before each run. Cold: the pool is empty (WARM_POOL_SIZE=0). `bodies`: the
 * settings asked for, by name (a warm browser is fitted to them when handed out), taken in turn in every round so
 * that a machine that gets slower or faster meanwhile weighs on each alike.
 */
export async function acquisition<K extends string>(
  stack: BrowserStack,
  runs: number,
  idle: number,
  /** What each kind asks for: the same body every round, or one made for the round. */
  bodies: Record<K, object | ((round: number) => object)>,
) {
  const names = Object.keys(bodies) as K[];
  const acquire = new Map(names.map((name) => [name, [] as number[]]));
  const stop: number[] = [];
  for (let i = 0; i < runs; i++) {
    for (const name of names) {
      await settleAt(stack, idle);
      const t0 = performance.now();
      const body = bodies[name];
      const browser = await stack.request("POST", "/api/v4/browsers", typeof body === "function" ? body(i) : body);
      const cdp = await openCdp(browser.cdpUrl);
      await cdp.send("Browser.getVersion");
      acquire.get(name)?.push(performance.now() - t0);
      cdp.close();
      const t1 = performance.now();
      await stack.request("PATCH", `/api/v4/browsers/${browser.id}`, { action: "stop" });
      stop.push(performance.now() - t1);
    }
  }
  const summaries = Object.fromEntries(names.map((name) => [name, summarize(acquire.get(name) ?? [])]));
  return { acquire: summaries as Record<K, ReturnType<typeof summarize>>, stop: summarize(stop) };
}

/** Our launch flags, for a Chromium launched directly (puppeteer picks its own DevTools port and user data folder). */
function directArgs() {
  return chromiumArgs({
    userDataDir: "",
    screenWidth: 1920,
    screenHeight: 1080,
    devtoolsPort: 0,
    proxyPort: 0,
    noSandbox: false,
    isolatedServices: true,
  }).filter((arg) => !/^--(proxy|remote-debugging|user-data-dir)|^about:blank$/.test(arg));
}

/**
 * Chromium launched directly by puppeteer with our flags, on a user data folder of its own kept from launch to launch
 * (as a profile's is), without Chromium's own sandbox (as root, Chromium runs only so; ours keeps it). `dispose`
 * removes the folder.
 */
function directLauncher() {
  const userDataDir = mkdtempSync(join(tmpdir(), "bas-bench-direct-"));
  return {
    launch: { executablePath: findChromium(), args: [...directArgs(), "--no-sandbox"], userDataDir, env: {} },
    dispose: () => rmSync(userDataDir, { recursive: true, force: true }),
  };
}

/**
 * Once the pool holds `idle` browsers and the machine is quiet: launches Chromium directly, runs `use` on it (with
 * the moment the launch began), closes it, and answers how long that took from the launch to the close's end. Then
 * waits until its last process is gone (a sandboxed one's zygotes end a moment after it; the next launch needs the
 * folder).
 */
async function withDirectChromium(
  stack: BrowserStack,
  idle: number,
  launch: ReturnType<typeof directLauncher>["launch"],
  use: (browser: Awaited<ReturnType<typeof puppeteer.launch>>, launchedAt: number) => Promise<void>,
): Promise<number> {
  await settleAt(stack, idle);
  const launchedAt = performance.now();
  const chromium = await puppeteer.launch({ ...launch, env: { ...process.env, ...launch.env } });
  try {
    await use(chromium, launchedAt);
  } finally {
    await chromium.close();
  }
  const took = performance.now() - launchedAt;
  await until(async () => (await findProcessesByArgPrefix(`--user-data-dir=${launch.userDataDir}`)).length === 0);
  return took;
}

/**
 * (a) with a profile, which launches cold (it needs its own user data, restored from the profile's last state),
 * against Chromium launched directly in the same rounds (`directLauncher`): no proxy, nothing recorded. Both up to the
 * first CDP answer. The same launch with Chromium's own sandbox on, as an unprivileged user, is measured too, to tell
 * that sandbox's share from the rest.
 */
export async function profileAcquisition(stack: BrowserStack, runs: number) {
  const profile = await stack.request("POST", "/api/v4/profiles", { name: "bench" });
  const withProfile: number[] = [];
  const direct: number[] = [];
  const sandboxed: number[] = [];
  const plain = directLauncher();
  const { dir: sandboxedDir, ...asUser } = directAsUser();
  const launchers = [
    { samples: direct, ...plain.launch },
    { samples: sandboxed, ...asUser, args: directArgs() },
  ];
  for (let i = 0; i < runs; i++) {
    await settleAt(stack, 0);
    const t0 = performance.now();
    const browser = await stack.request("POST", "/api/v4/browsers", { profileId: profile.id });
    const cdp = await openCdp(browser.cdpUrl);
    await cdp.send("Browser.getVersion");
    withProfile.push(performance.now() - t0);
    cdp.close();
    await stack.request("PATCH", `/api/v4/browsers/${browser.id}`, { action: "stop" });
    for (const { samples, ...launch } of launchers) {
      await withDirectChromium(stack, 0, launch, async (chromium, launchedAt) => {
        await chromium.version();
        samples.push(performance.now() - launchedAt);
      });
    }
  }
  plain.dispose();
  rmSync(sandboxedDir, { recursive: true, force: true });
  return { withProfile: summarize(withProfile), direct: summarize(direct), sandboxed: summarize(sandboxed) };
}

/** A user no browser of the pool runs as (they start at BROWSER_UID_BASE, 200000 by default). */
const DIRECT_UID = 150_000;

/**
 * Chromium launched directly with its own sandbox on. It refuses that as root, so there it starts as an unprivileged
 * user through a wrapper (setpriv), with a profile, a home and a temp folder of that user's.
 */
function directAsUser() {
  const dir = mkdtempSync(join(tmpdir(), "bas-bench-sandboxed-"));
  const userDataDir = join(dir, "profile");
  const temp = join(dir, "tmp");
  for (const folder of [userDataDir, temp]) mkdirSync(folder);
  const env = {
    HOME: userDataDir,
    XDG_CONFIG_HOME: join(userDataDir, ".config"),
    XDG_CACHE_HOME: join(userDataDir, ".cache"),
    TMPDIR: temp,
  };
  if (process.getuid?.() !== 0) return { dir, executablePath: findChromium(), userDataDir, env };
  const wrapper = join(dir, "chromium-as-user.sh");
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexec setpriv --reuid=${DIRECT_UID} --regid=${DIRECT_UID} --clear-groups ${findChromium()} "$@"\n`,
    { mode: 0o755 },
  );
  chmodSync(dir, 0o755);
  for (const folder of [userDataDir, temp]) chownSync(folder, DIRECT_UID, DIRECT_UID);
  return { dir, executablePath: wrapper, userDataDir, env };
}

/**
 * (b) create → puppeteer connect → open a local page → read its title → stop, one at a time, the warm pool refilled
 * between runs; in the same rounds, the same steps on a Chromium launched directly (launch, open the page, read its
 * title, close), the baseline the ratio is taken against.
 */
export async function lifecycle(stack: BrowserStack, runs: number, pageUrl: string, idle: number) {
  const total: number[] = [];
  const create: number[] = [];
  const stop: number[] = [];
  const gone: number[] = [];
  const direct: number[] = [];
  const plain = directLauncher();
  for (let i = 0; i < runs; i++) {
    await settleAt(stack, idle);
    const t0 = performance.now();
    const browser = await stack.request("POST", "/api/v4/browsers", {});
    create.push(performance.now() - t0);
    const client = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl, defaultViewport: null });
    const page = await client.newPage();
    await page.goto(pageUrl);
    await page.title();
    const t1 = performance.now();
    await stack.request("PATCH", `/api/v4/browsers/${browser.id}`, { action: "stop" });
    const t2 = performance.now();
    total.push(t2 - t0);
    stop.push(t2 - t1);
    await client.disconnect().catch(() => undefined);
    await until(async () => !(await stack.chromiumIds()).includes(browser.id));
    gone.push(performance.now() - t1);
    direct.push(
      await withDirectChromium(stack, idle, plain.launch, async (chromium) => {
        const directPage = await chromium.newPage();
        await directPage.goto(pageUrl);
        await directPage.title();
      }),
    );
  }
  plain.dispose();
  return {
    lifecycle: summarize(total),
    create: summarize(create),
    stop: summarize(stop),
    processesGone: summarize(gone),
    direct: summarize(direct),
  };
}

/** The socket a sandboxed browser's DevTools is reached through from this host (it has no port here). */
const devtoolsSocket = (stack: BrowserStack, id: string) => browserSocketsOf(stack.dataDir, id).devtools;

/** `ws+unix://` addresses the browser's own DevTools straight through its socket (the `ws` library's form). */
const directUrl = (stack: BrowserStack, id: string, path: string) => `ws+unix://${devtoolsSocket(stack, id)}:${path}`;

async function browserPath(stack: BrowserStack, id: string): Promise<string> {
  const version = (await fetchDevtoolsJson(
    { host: "127.0.0.1", port: 9222, socketPath: devtoolsSocket(stack, id) },
    "/json/version",
  )) as { webSocketDebuggerUrl: string };
  return new URL(version.webSocketDebuggerUrl).pathname;
}

async function evaluateLoop(clients: CdpClient[], perClient: number, latencies: number[]): Promise<number> {
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      for (let i = 0; i < perClient; i++) {
        const s = performance.now();
        const r = await c.send("Runtime.evaluate", { expression: "1+1", returnByValue: true });
        latencies.push(performance.now() - s);
        if (r.result.value !== 2) throw new Error("wrong answer");
      }
    }),
  );
  return performance.now() - t0;
}

/** Calls in one timed block (all connections together): short, so the two blocks of a pair see the same machine. */
const BLOCK_CALLS = 200;
/** Consecutive block pairs whose p99s are compared (2000 calls a side: the p99 is the 20th slowest). */
const PAIRS_PER_GROUP = 10;

/**
 * (c) Runtime.evaluate("1+1") round trips on a page, through our proxy and straight to Chromium: the same client
 * code, browser and page on both sides. The time is split into many short blocks in adjacent pairs (one block each
 * side, the order alternating), and the figure is the median of the pairs' ratios: a neighbour's burst or drift on
 * the shared machine hits both blocks of a pair alike, or skews a few pairs the median ignores. (A ratio of median
 * rates over eight long blocks a side swung between 69 and 86 % from run to run.) The ratio comes with its 95 %
 * confidence interval, and p99s are compared the same way (see below).
 */
export async function roundTrips(stack: BrowserStack, total: number, connections: number) {
  const browser = await stack.request("POST", "/api/v4/browsers", { proxyCountryCode: null });
  const list = (await (await fetch(`${browser.cdpUrl.replace(/^ws/, "http")}/json/list`)).json()) as any[];
  const target = list.find((t) => t.type === "page");
  const urls = {
    direct: directUrl(stack, browser.id, `/devtools/page/${target.id}`),
    proxy: `${browser.cdpUrl}/devtools/page/${target.id}`,
  };
  // What a new connection costs before its first answer, each side in turn: once the machine has gone quiet, as a
  // caller connects after its browser was handed out, and back to back, as one that reconnects at once.
  const connect = { direct: [] as number[], proxy: [] as number[] };
  const backToBack = { direct: [] as number[], proxy: [] as number[] };
  for (const [samples, pause] of [
    [connect, true],
    [backToBack, false],
  ] as const) {
    for (let i = 0; i < CONNECT_SAMPLES; i++) {
      for (const mode of i % 2 === 0 ? (["direct", "proxy"] as const) : (["proxy", "direct"] as const)) {
        if (pause) await quietMachine();
        const started = performance.now();
        const client = await openCdp(urls[mode]);
        await client.send("Runtime.evaluate", { expression: "1+1" });
        samples[mode].push(performance.now() - started);
        client.close();
      }
    }
  }
  const open = async (url: string) => Promise.all(Array.from({ length: connections }, () => openCdp(url)));
  const clients = { direct: await open(urls.direct), proxy: await open(urls.proxy) };
  const elapsed = { direct: 0, proxy: 0 };
  for (const mode of ["direct", "proxy"] as const) await evaluateLoop(clients[mode], 100, []);
  const perClient = Math.ceil(BLOCK_CALLS / connections);
  const pairs = Math.max(1, Math.round(total / (perClient * connections)));
  /** Proxy throughput over direct throughput, one per pair (same calls each side, so the inverse ratio of times). */
  const ratios: number[] = [];
  /** Latencies per group of consecutive pairs, each side. */
  const groups: Array<{ direct: number[]; proxy: number[] }> = [];
  for (let b = 0; b < pairs; b++) {
    if (b % PAIRS_PER_GROUP === 0) groups.push({ direct: [], proxy: [] });
    const group = groups[groups.length - 1];
    const ms = { direct: 0, proxy: 0 };
    for (const mode of b % 2 === 0 ? (["direct", "proxy"] as const) : (["proxy", "direct"] as const)) {
      ms[mode] = await evaluateLoop(clients[mode], perClient, group[mode]);
      elapsed[mode] += ms[mode];
    }
    ratios.push(ms.direct / ms.proxy);
  }
  for (const c of [...clients.direct, ...clients.proxy]) c.close();
  await stack.request("PATCH", `/api/v4/browsers/${browser.id}`, { action: "stop" });
  const direct = summarize(groups.flatMap((g) => g.direct));
  const proxy = summarize(groups.flatMap((g) => g.proxy));
  const calls = pairs * perClient * connections;
  // A p99 over the whole run is set by its worst few milliseconds, which a neighbour's burst can hand to one side:
  // the p99s are compared within each group of pairs instead (a few thousand calls each side), and the median taken.
  const p99Ratios = groups.map((g) => percentile(g.proxy, 99) / percentile(g.direct, 99));
  return {
    connections,
    pairs,
    direct,
    proxy,
    addedP50: proxy.p50 - direct.p50,
    p99Ratio: percentile(p99Ratios, 50),
    throughput: { direct: calls / (elapsed.direct / 1000), proxy: calls / (elapsed.proxy / 1000) },
    ratio: percentile(ratios, 50),
    ratioCi: medianInterval(ratios),
    connect: { direct: summarize(connect.direct), proxy: summarize(connect.proxy) },
    connectBackToBack: { direct: summarize(backToBack.direct), proxy: summarize(backToBack.proxy) },
  };
}

/**
 * A distribution-free 95 % confidence interval of the median of `values`: the order statistics n/2 ∓ 0.98·√n
 * (the binomial(n, ½) quantiles, normal approximation).
 */
function medianInterval(values: readonly number[]): { low: number; high: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const half = 0.98 * Math.sqrt(n);
  return {
    low: sorted[Math.max(0, Math.floor(n / 2 - half))],
    high: sorted[Math.min(n - 1, Math.ceil(n / 2 + half))],
  };
}

/** The first process of browser `id` (its sandbox, which leads its process group): the root of all it started. */
export async function browserRoot(stack: BrowserStack, id: string): Promise<number> {
  const [p] = await findProcessesByArgPrefix(`--user-data-dir=${stack.dataDir}/${id}`);
  return (await processGroupOf(p.pid))!;
}

async function memAvailable(): Promise<number> {
  const info = await readFile("/proc/meminfo", "utf8");
  return Number(info.match(/^MemAvailable:\s+(\d+)/m)?.[1] ?? 0) * 1024;
}

const RELAYED_CONNECTIONS = 20;
/** Connections opened (and closed) each side to time the connection itself. */
const CONNECT_SAMPLES = 20;

/** (d) Memory of idle browsers (all their processes) and of idle CDP connections through the proxy. */
export async function memory(stack: BrowserStack, browsers: number, connections: number) {
  const made = [];
  for (let i = 0; i < browsers; i++) made.push(await stack.request("POST", "/api/v4/browsers", {}));
  await sleep(3_000);
  const perBrowser: Array<Awaited<ReturnType<typeof treeMemory>>> = [];
  for (const b of made) perBrowser.push(await treeMemory(await browserRoot(stack, b.id)));
  const avg = (key: "rssBytes" | "pssBytes") => perBrowser.reduce((s, m) => s + (m?.[key] ?? 0), 0) / made.length;

  // The proxy's cost per idle connection, measured on a proxy alone in its own process after a full GC each time.
  const probe = fork(join(__dirname, "proxy-probe.ts"), [], { execArgv: ["--expose-gc", "--import", "tsx"] });
  const reply = (type: string) =>
    new Promise<any>((resolve) => probe.on("message", (m: any) => m.type === type && resolve(m)));
  const { port } = await reply("ready");
  const target = made[0];
  const [, , browserId, secret] = new URL(target.cdpUrl).pathname.split("/");
  const devtools = `ws://127.0.0.1:9222${await browserPath(stack, browserId)}`;
  const spec = { browserId, secret, devtoolsUrl: devtools, devtoolsSocket: devtoolsSocket(stack, browserId) };
  probe.send({ type: "register", spec: { ...spec, publicUrl: target.cdpUrl } });
  await reply("registered");
  const measure = async () => {
    probe.send({ type: "measure" });
    return (await reply("memory")) as { rss: number; heapUsed: number; external: number };
  };
  const group = await browserRoot(stack, browserId);
  const before = { proxy: await measure(), chromium: (await treeMemory(group))!.pssBytes };
  const clients: CdpClient[] = [];
  for (let i = 0; i < connections; i++)
    clients.push(await openCdp(`ws://127.0.0.1:${port}/cdp/${browserId}/${secret}`));
  await sleep(1_000);
  const after = { proxy: await measure(), chromium: (await treeMemory(group))!.pssBytes };
  for (const c of clients) c.close();
  probe.send({ type: "close" });
  // As shipped, each caller's connection is a relay process of its own in the browser's sandbox network.
  const relayed: CdpClient[] = [];
  for (let i = 0; i < RELAYED_CONNECTIONS; i++) relayed.push(await openCdp(target.cdpUrl));
  await sleep(1_000);
  // The relay host is root; the relays it forked are the browser's user.
  const relays = { carrying: { count: 0, pss: 0 }, host: { count: 0, pss: 0 } };
  for (const { pid } of await findProcessesByArgPrefix(RELAY_HOST_PROGRAM)) {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kind = /^Uid:\s+0\s/m.test(status) ? relays.host : relays.carrying;
    kind.count += 1;
    kind.pss += (await treeMemory(pid))?.pssBytes ?? 0;
  }
  for (const c of relayed) c.close();
  for (const b of made) await stack.request("PATCH", `/api/v4/browsers/${b.id}`, { action: "stop" });
  return {
    browserRssMb: avg("rssBytes") / 2 ** 20,
    browserPssMb: avg("pssBytes") / 2 ** 20,
    processesPerBrowser: perBrowser[0]?.processes ?? 0,
    proxyRssKbPerConnection: (after.proxy.rss - before.proxy.rss) / connections / 1024,
    proxyHeapKbPerConnection:
      (after.proxy.heapUsed + after.proxy.external - before.proxy.heapUsed - before.proxy.external) /
      connections /
      1024,
    chromiumKbPerConnection: (after.chromium - before.chromium) / connections / 1024,
    relays: relays.carrying.count,
    relayPssKbPerConnection: relays.carrying.pss / Math.max(1, relays.carrying.count) / 1024,
    relayHostPssKb: relays.host.pss / 1024,
  };
}

/**
 * (e) Browsers added ten at a time, each with a local page open; after each step every browser must answer a
 * Runtime.evaluate within 1 s. Stops at the first miss or at `max`.
 */
export async function capacity(stack: BrowserStack, pageUrl: string, max: number, step = 10) {
  const held: Array<{ id: string; cdp: CdpClient }> = [];
  const steps = [];
  const baseline = await memAvailable();
  let failed = false;
  try {
    while (held.length < max && !failed) {
      for (let i = 0; i < step && held.length < max; i += 2) {
        const pair = await Promise.all(
          Array.from({ length: Math.min(2, max - held.length) }, async () => {
            const b = await stack.request("POST", "/api/v4/browsers", { proxyCountryCode: null });
            const list = (await (await fetch(`${b.cdpUrl.replace(/^ws/, "http")}/json/list`)).json()) as any[];
            const cdp = await openCdp(`${b.cdpUrl}/devtools/page/${list.find((t) => t.type === "page").id}`);
            await cdp.send("Page.navigate", { url: pageUrl });
            return { id: b.id, cdp };
          }),
        );
        held.push(...pair);
      }
      await sleep(1_000);
      const times = await Promise.all(
        held.map(async ({ cdp }) => {
          const s = performance.now();
          await Promise.race([cdp.send("Runtime.evaluate", { expression: "1+1" }), sleep(5_000)]);
          return performance.now() - s;
        }),
      );
      const worst = Math.max(...times);
      steps.push({
        browsers: held.length,
        worstMs: Math.round(worst),
        p50Ms: Number(summarize(times).p50.toFixed(1)),
        usedGb: Number(((baseline - (await memAvailable())) / 2 ** 30).toFixed(2)),
      });
      if (worst > 1_000) failed = true;
    }
  } finally {
    for (const { id, cdp } of held) {
      cdp.close();
      await stack.request("PATCH", `/api/v4/browsers/${id}`, { action: "stop" }).catch(() => undefined);
    }
  }
  const ok = steps.filter((s) => s.worstMs <= 1_000);
  const last = ok.at(-1);
  const perBrowserGb = last ? last.usedGb / last.browsers : 0;
  return {
    held: last?.browsers ?? 0,
    limitReached: failed,
    steps,
    /** Browsers that would fit in the memory that was available before the test, at the measured cost each. */
    memoryBound: perBrowserGb > 0 ? Math.floor(baseline / 2 ** 30 / perBrowserGb) : undefined,
  };
}
