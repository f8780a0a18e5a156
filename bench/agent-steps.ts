/**
 * Agent overhead per step, without the model's own time: observe (serialize the page), the plumbing around the model
 * call, act (CDP + waiting for the page to settle), the step's screenshot and its report (screenshot into the blob
 * store + StepRecorded to a real sessions service), on each fixture page. A step's overhead is its wall time from
 * one observation to the next minus the model call. The scripted model answers after MODEL_MS (default 150 ms, far
 * quicker than a real one): work the agent does while the model thinks (the screenshot, the last step's report) is
 * then hidden as it is in a real run; MODEL_MS=0 shows the same steps with nothing to hide behind. Prints p50/p95
 * per page and the serialized page size in tokens (~4 characters per token). Baseline in the same run: one bare CDP
 * round-trip (Runtime.evaluate of 1) and one bare screenshot on the same browser.
 *
 * Targets: p50 <= 50 ms on ordinary pages; p95 <= 500 ms on the 5,000-element page.
 * Run: npx tsx bench/agent-steps.ts   (STEPS=24 per page by default; BENCH_SITES=frames,spa for some pages only)
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createNatsBlobStore } from "@bas/blobs";
import { ensureStreams, streamNames } from "@bas/event-store";
import { sessions } from "@bas/proto";
import { connectClient, connectNats } from "@bas/service-kit";
import { loadSessionsConfig, startSessionsService } from "@bas/sessions";
import { CdpBrowserDriver } from "../services/runner/src/adapters/cdp/cdp-browser-driver";
import { connectSessionReports } from "../services/runner/src/adapters/grpc/session-reports";
import { OpenAiChat } from "../services/runner/src/adapters/openai/openai-chat";
import { runAgent } from "../services/runner/src/app/agent-loop";
import type { BrowserDriver } from "../services/runner/src/app/browser-driver";
import { createModelCaller } from "../services/runner/src/app/model-caller";
import { createRouteTable } from "../services/runner/src/domain/model-routes";
import { estimateTokens, renderSnapshot } from "../services/runner/src/domain/page-state";
import { createRedactor } from "../services/runner/src/domain/secrets";
import { launchTestChromium } from "../test/support/chromium";
import { LOGIN_ACCOUNT, SITE_PATHS, startFixtureSites } from "../test/fixtures/sites";
import {
  indexOf,
  type RecordedRequest,
  type ScriptStep,
  startScriptedLlm,
  toolCallReply,
} from "../test/support/scripted-llm";
import { benchInfra } from "./support/infra";
import { percentile } from "./support/stats";

const STEPS = Number(process.env.STEPS ?? 24);
const MODEL_MS = Number(process.env.MODEL_MS ?? 150);
const MAX_CHARS = 40_000;
const ONLY_SITES = process.env.BENCH_SITES?.split(",");
/** The single-page app's API answers after this long: each of its steps waits for one call, the page's own time. */
const SPA_API_MS = 50;
const PAGE_OWN_MS: Partial<Record<keyof typeof SITE_PATHS, number>> = { spa: SPA_API_MS };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Action = (req: RecordedRequest, i: number) => [string, Record<string, unknown>];

/** What the scripted model does on each page, in a cycle: ordinary interactions of that page. */
const CYCLES: Record<keyof typeof SITE_PATHS, Action[]> = {
  shop: [
    (r) => ["input_text", { index: indexOf(r, /<input type=search/), text: "Aurora" }],
    () => ["scroll", { direction: "down" }],
    () => ["scroll", { direction: "up" }],
    (r) => ["click", { index: indexOf(r, />All products</) }],
    () => ["go_back", {}],
  ],
  form: [
    (r) => ["input_text", { index: indexOf(r, /label="Full name"/), text: "Ada Lovelace" }],
    (r) => ["input_text", { index: indexOf(r, /label="Email"/), text: "ada@example.test" }],
    () => ["scroll", { direction: "down" }],
  ],
  login: [
    (r) => ["input_text", { index: indexOf(r, /<input type=email/), text: LOGIN_ACCOUNT.username }],
    (r) => ["input_text", { index: indexOf(r, /<input type=password/), text: "<secret>pw</secret>" }],
    () => ["scroll", { direction: "down" }],
  ],
  frames: [
    (r) => ["click", { index: indexOf(r, />Main button</) }],
    (r) => ["input_text", { index: indexOf(r, /placeholder="Frame note"/), text: "note" }],
    (r) => ["click", { index: indexOf(r, />Deep button</) }],
    (r) => ["input_text", { index: indexOf(r, /placeholder="Your name"/), text: "Grace" }],
  ],
  spa: [(r) => ["click", { index: indexOf(r, />Items</) }], (r) => ["click", { index: indexOf(r, />Home</) }]],
  big: [
    (r, i) => ["click", { index: indexOf(r, /<button>Select item/, i) }],
    (r, i) => ["input_text", { index: indexOf(r, /placeholder="Note/, i), text: "x" }],
    () => ["scroll", { direction: "down" }],
    () => ["scroll", { direction: "up" }],
  ],
  upload: [() => ["scroll", { direction: "down" }], () => ["scroll", { direction: "up" }]],
};

interface Sample {
  observe: number;
  act: number;
  total: number;
  tokens: number;
}

/** Times observe and act of the driver the agent uses. */
function timed(driver: BrowserDriver, state: { current: Partial<Sample> }): BrowserDriver {
  return {
    observe: async (o) => {
      const t = performance.now();
      const s = await driver.observe(o);
      state.current.observe = performance.now() - t;
      state.current.tokens = estimateTokens(renderSnapshot(s, MAX_CHARS));
      return s;
    },
    act: async (a, o) => {
      const t = performance.now();
      const r = await driver.act(a, o);
      state.current.act = (state.current.act ?? 0) + performance.now() - t;
      return r;
    },
    screenshot: () => driver.screenshot(),
    pageContent: (n) => driver.pageContent(n),
    setInputFile: (i, f) => driver.setInputFile(i, f),
    isConnected: () => driver.isConnected(),
    disconnect: () => driver.disconnect(),
  };
}

async function main() {
  const infra = await benchInfra();
  const namespace = `bench${randomBytes(4).toString("hex")}`;
  const [sites, llm, chrome] = await Promise.all([
    startFixtureSites({ spaDelayMs: SPA_API_MS }),
    startScriptedLlm(),
    launchTestChromium(),
  ]);
  const nats = await connectNats(infra.natsUrl, "bench-agent");
  await ensureStreams(nats.jsm, streamNames(namespace));
  const service = await startSessionsService(
    loadSessionsConfig({
      NATS_URL: infra.natsUrl,
      DATABASE_URL: infra.databaseUrl,
      NAMESPACE: namespace,
      LOG_LEVEL: "silent",
      GRPC_PORT: "0",
      METRICS_PORT: "0",
      SMTP_PORT: "0",
      SECRETS_KEY: randomBytes(32).toString("hex"),
    }),
  );
  const api = connectClient(sessions.SessionsClient, `127.0.0.1:${service.grpcPort}`);
  const reports = connectSessionReports(`127.0.0.1:${service.grpcPort}`, { graceMs: 5_000 });
  const blobs = await createNatsBlobStore({ js: nats.js, namespace });
  const chat = new OpenAiChat({ timeoutMs: 10_000, maxRetries: 0 });
  const rows: string[] = [];
  try {
    // Baseline: the bare CDP costs every step pays at least once.
    const page = (await chrome.browser.pages())[0];
    await page.goto(`${sites.url}/shop/`);
    const rtt: number[] = [];
    const shots: number[] = [];
    for (let i = 0; i < 50; i++) {
      let t = performance.now();
      await page.evaluate("1");
      rtt.push(performance.now() - t);
      t = performance.now();
      await page.screenshot({ type: "jpeg", quality: 60, optimizeForSpeed: true });
      shots.push(performance.now() - t);
    }
    console.log(
      `baseline: CDP round-trip p50 ${percentile(rtt, 50).toFixed(2)} ms; screenshot p50 ${percentile(shots, 50).toFixed(1)} ms`,
    );

    for (const [site, path] of Object.entries(SITE_PATHS) as Array<[keyof typeof SITE_PATHS, string]>) {
      if (ONLY_SITES && !ONLY_SITES.includes(site)) continue;
      const key = `bench-${site}`;
      const cycle = CYCLES[site];
      const steps: ScriptStep[] = [toolCallReply("go_to_url", { url: `${sites.url}${path}` })];
      for (let i = 0; i < STEPS; i++) steps.push((req) => toolCallReply(...cycle[i % cycle.length](req, i)));
      steps.push(toolCallReply("done", { success: true, text: "ok" }));
      llm.script(key, steps);

      const session = await api.createSession({
        projectId: namespace,
        task: `bench ${site}`,
        model: "svc-max",
        keepAlive: false,
        sensitiveData: {},
        inbox: false,
        codeMode: false,
        useOwnKey: false,
        outputSchema: undefined,
        browser: { allowedDomains: [], record: false },
        idempotencyKey: randomUUID(),
      });
      // The task id travels on the work queue; the bench reads it from the session's events instead.
      const task = await firstTaskId(nats, namespace, session.id);
      await reports.sandboxReady({ sessionId: session.id, browserId: "bench" });
      await reports.taskStarted({ sessionId: session.id, taskId: task, title: site, attempt: 1 });

      const route = createRouteTable({ baseUrl: llm.url, apiKey: key, overrides: {}, canonical: (m) => m }).resolve(
        "svc-max",
      );
      const samples: Sample[] = [];
      const reportTimes: number[] = [];
      const state: { current: Partial<Sample> } = { current: {} };
      let step = 0;
      let modelTime = 0;
      const redact = createRedactor({ pw: LOGIN_ACCOUNT.password });
      const model = createModelCaller({
        complete: async (request) => {
          const t = performance.now();
          const [r] = await Promise.all([chat.complete({ route, apiKey: key }, request), sleep(MODEL_MS)]);
          modelTime += performance.now() - t;
          return r;
        },
        recordUsage: async () => {},
        redact,
      });
      const metrics = {
        stepTaken(seconds: number) {
          step += 1;
          // The first step (navigation to the page) and the final `done` are not part of the sample.
          if (step > 1 && step <= STEPS + 1)
            samples.push({ act: 0, ...state.current, total: seconds * 1000 - modelTime } as Sample);
          state.current = {};
          modelTime = 0;
        },
      };
      const driver = await CdpBrowserDriver.connect(chrome.wsEndpoint);
      try {
        await runAgent(
          {
            task: `bench ${site}`,
            earlierTurns: [],
            mode: {},
            secretKeys: ["pw"],
            secretDomains: {},
            maxSteps: STEPS + 2,
            vision: false,
          },
          {
            browser: timed(driver, state),
            model,
            secrets: async () => ({ pw: LOGIN_ACCOUNT.password }),
            redact,
            signal: new AbortController().signal,
            now: () => new Date(),
            options: {
              maxObserveChars: MAX_CHARS,
              extractMaxChars: MAX_CHARS * 3,
              schemaRetries: 2,
              screenshots: true,
            },
            metrics,
            recordStep: async (step) => {
              const t = performance.now();
              const ref = step.screenshot
                ? await blobs.put(step.screenshot, {
                    contentType: "image/jpeg",
                    ref: `screenshot-${task}-1-${step.step}.jpg`,
                  })
                : undefined;
              await reports.stepRecorded({
                sessionId: session.id,
                taskId: task,
                step: step.step,
                summary: step.summary,
                messages: step.messages.map((m) => ({
                  role: m.role,
                  type: m.type,
                  data: m.data,
                  hidden: m.hidden,
                  ...(m.summary ? { summary: m.summary } : {}),
                })),
                ...(ref ? { screenshotRef: ref } : {}),
              });
              reportTimes.push(performance.now() - t);
            },
          },
        );
      } finally {
        await driver.disconnect();
      }
      const p = (k: keyof Sample, q: number) =>
        percentile(
          samples.map((s) => s[k] ?? 0),
          q,
        );
      rows.push(
        [
          site.padEnd(7),
          String(samples.length).padStart(3),
          `${p("total", 50).toFixed(1)}`.padStart(8),
          `${p("total", 95).toFixed(1)}`.padStart(8),
          `${(p("total", 50) - (PAGE_OWN_MS[site] ?? 0)).toFixed(1)}`.padStart(8),
          `${p("observe", 50).toFixed(1)}`.padStart(8),
          `${p("act", 50).toFixed(1)}`.padStart(8),
          `${percentile(reportTimes, 50).toFixed(1)}`.padStart(8),
          `${Math.round(p("tokens", 50))}`.padStart(8),
        ].join(" "),
      );
    }
  } finally {
    console.log(
      `\nagent overhead per step (ms, model time excluded; the model answers after ${MODEL_MS} ms), ${STEPS} steps per page`,
    );
    console.log("page      n  p50 tot  p95 tot   p50 us  p50 obs  p50 act  p50 rep   tokens");
    console.log(
      `(us: p50 tot less the page's own waiting, the SPA's ${SPA_API_MS} ms API; rep: the step's report, off the path)`,
    );
    for (const row of rows) console.log(row);
    console.log("targets: p50 <= 50 ms on ordinary pages; p95 <= 500 ms on the 5,000-element page (big)");
    api.close();
    reports.close();
    await blobs.close();
    await service.close();
    await nats.nc.drain();
    await Promise.all([sites.close(), llm.close(), chrome.close()]);
    await infra.close();
  }
}

async function firstTaskId(
  nats: Awaited<ReturnType<typeof connectNats>>,
  namespace: string,
  sessionId: string,
): Promise<string> {
  const streams = streamNames(namespace);
  const subject = streams.events.subject("session", sessionId);
  let dispatched: { type: string; data: { taskId?: string } } | undefined;
  for (let seq = 1; !dispatched; ) {
    const m = await nats.jsm.streams
      .getMessage(streams.events.stream, { seq, next_by_subj: subject } as never)
      .catch(() => null);
    if (!m) break;
    const event = m.json() as { type: string; data: { taskId?: string } };
    if (event.type === "TaskDispatched") dispatched = event;
    seq = m.seq + 1;
  }
  if (!dispatched?.data.taskId) throw new Error("no TaskDispatched event for the bench session");
  return dispatched.data.taskId;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
