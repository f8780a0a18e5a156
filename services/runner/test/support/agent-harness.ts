import { startFixtureSites, type FixtureSites } from "../../../../test/fixtures/sites";
import { type ScriptedLlm, startScriptedLlm } from "../../../../test/support/scripted-llm";
import { CdpBrowserDriver } from "../../src/adapters/cdp/cdp-browser-driver";
import { runScript } from "../../src/adapters/node/script-runner";
import { OpenAiChat } from "../../src/adapters/openai/openai-chat";
import { type AgentOutcome, type AgentTask, type RecordedStep, runAgent } from "../../src/app/agent-loop";
import { createModelCaller } from "../../src/app/model-caller";
import type { TokenUsage } from "../../src/app/ports";
import type { OutputMode } from "../../src/domain/actions";
import { createRouteTable } from "../../src/domain/model-routes";
import { createRedactor } from "../../src/domain/secrets";
import { launchTestChromium, type TestChromium } from "../../../../test/support/chromium";

export interface AgentRun {
  outcome: AgentOutcome;
  steps: RecordedStep[];
  usage: TokenUsage[];
  totals: TokenUsage;
}

export interface RunOptions {
  mode?: OutputMode;
  secrets?: Record<string, string>;
  /** Where each secret may be typed (default: anywhere). */
  secretDomains?: Record<string, string[]>;
  maxSteps?: number;
  /** The model takes images: a screenshot goes with each step. */
  vision?: boolean;
  /** The session's earlier tasks (a follow-up). */
  earlierTurns?: AgentTask["earlierTurns"];
  signal?: AbortSignal;
  /** Called as each step is reported; the report is done when what it returns settles. */
  onStep?: (step: RecordedStep) => unknown;
}

/** A real Chromium, the fixture sites and the scripted model, wired to the agent loop as the runner wires it. */
export interface AgentHarness {
  sites: FixtureSites;
  llm: ScriptedLlm;
  chrome: TestChromium;
  run(key: string, task: string, options?: RunOptions): Promise<AgentRun>;
  close(): Promise<void>;
}

export async function startAgentHarness(): Promise<AgentHarness> {
  const [sites, llm, chrome] = await Promise.all([
    startFixtureSites({ spaDelayMs: 300 }),
    startScriptedLlm(),
    launchTestChromium(),
  ]);
  const chat = new OpenAiChat({ timeoutMs: 20_000, maxRetries: 2 });
  return {
    sites,
    llm,
    chrome,
    async run(key, task, options = {}) {
      const route = createRouteTable({ baseUrl: llm.url, apiKey: key, overrides: {}, canonical: (m) => m }).resolve(
        "svc-max",
      );
      const redact = createRedactor(options.secrets ?? {});
      const usage: TokenUsage[] = [];
      const model = createModelCaller({
        complete: (request) => chat.complete({ route, apiKey: route.apiKey }, request),
        recordUsage: async (u) => {
          usage.push(u);
        },
        redact,
      });
      const steps: RecordedStep[] = [];
      // Each run starts in one fresh tab: a page of the run before (and a navigation it left going) cannot leak in.
      const fresh = await chrome.browser.newPage();
      for (const page of await chrome.browser.pages()) if (page !== fresh) await page.close();
      const browser = await CdpBrowserDriver.connect(chrome.wsEndpoint);
      const agentTask: AgentTask = {
        task,
        earlierTurns: options.earlierTurns ?? [],
        mode: options.mode ?? {},
        secretKeys: Object.keys(options.secrets ?? {}),
        secretDomains: options.secretDomains ?? {},
        maxSteps: options.maxSteps ?? 20,
        vision: options.vision ?? false,
      };
      try {
        const outcome = await runAgent(agentTask, {
          browser,
          model,
          secrets: async () => options.secrets ?? {},
          redact,
          recordStep: async (step) => {
            steps.push(step);
            await options.onStep?.(step);
          },
          signal: options.signal ?? new AbortController().signal,
          now: () => new Date(),
          runScript: (code, env) =>
            runScript(code, env, {
              browserWsEndpoint: chrome.wsEndpoint,
              timeoutMs: 60_000,
              uid: process.getuid?.() === 0 ? 199_999 : undefined,
            }),
          options: { maxObserveChars: 40_000, extractMaxChars: 60_000, schemaRetries: 2, screenshots: false },
        });
        return { outcome, steps, usage, totals: model.totals() };
      } finally {
        await browser.disconnect();
      }
    },
    async close() {
      await Promise.all([sites.close(), llm.close(), chrome.close()]);
    },
  };
}
