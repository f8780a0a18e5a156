import { inSpan } from "@bas/service-kit/tracing";
import { toolDefinitions } from "../domain/actions";
import { DEFAULT_HISTORY_OPTIONS, renderHistory, type StepRecord } from "../domain/history";
import { type PageSnapshot, renderSnapshot } from "../domain/page-state";
import { stepMessages } from "../domain/prompt";
import { summarizeStep } from "../domain/step-summary";
import { type AgentStart, FRESH_START, NEW_BROWSER_NOTE, newBrowserNotice } from "../domain/resume-plan";
import { type AgentDeps, type AgentOptions, type AgentOutcome, type AgentTask, toolAccess } from "./agent-types";
import { BrowserGoneError } from "./browser-errors";
import type { BrowserDriver, TraceEntry } from "./browser-driver";
import { BudgetExceededError, type ChatResult } from "./ports";
import { runToolCalls } from "./run-tool-calls";

export type {
  AgentDeps,
  AgentOptions,
  AgentOutcome,
  AgentTask,
  PlannedStep,
  Reconnected,
  RecordedStep,
  StepMessage,
} from "./agent-types";
export { type AgentStart, FRESH_START } from "../domain/resume-plan";

/**
 * Observe → decide → act, one model call per step, until `done`, the step limit, a stop or the budget. `start` says
 * where a later attempt of the task continues: from its next step, with the history of the earlier ones. A lost
 * connection to the browser is survived when `deps.reconnect` is given: a step cut short is recorded with an
 * unknown outcome, never run twice.
 */
export async function runAgent(
  task: AgentTask,
  deps: AgentDeps,
  start: AgentStart = FRESH_START,
): Promise<AgentOutcome> {
  const { model, redact, signal, options } = deps;
  let browser = deps.browser;
  const tools = toolDefinitions(task.mode, toolAccess(deps));
  const records: StepRecord[] = start.memories.map((m) => m.record);
  const trace: TraceEntry[] = start.memories.flatMap((m) => m.trace);
  let notes: string[] = [...start.notes];
  let notices = [...start.notices];
  let schemaFailures = start.memories.filter((m) => m.correction).length;
  /** The page as the model last saw it (what a judge of the run reads with the steps). */
  let lastPage = "";
  let secrets: Record<string, string> | undefined;
  const secretValues = async () => {
    secrets ??= await deps.secrets();
    return secrets;
  };
  /** Connects again after a lost connection; a new browser is news for the model and for the session. */
  const reconnect = async (err?: unknown): Promise<{ fresh: boolean }> => {
    if (!deps.reconnect) throw err instanceof BrowserGoneError ? err : new BrowserGoneError("the browser went away");
    const next = await deps.reconnect();
    browser = next.browser;
    if (next.fresh) {
      notes = [...notes, NEW_BROWSER_NOTE];
      notices = [...notices, newBrowserNotice()];
    } else {
      // The new connection has not looked at the page yet: one look, and the indexes the model knows resolve again
      // (they are kept on the page's elements).
      await observe(browser, options, false).catch(() => undefined);
    }
    return { fresh: next.fresh };
  };

  /**
   * The last step's report, on its way while the next step looks and decides; awaited before that step acts (so a
   * crash never finds two steps unreported) and before the loop ends, where a failed report is thrown.
   */
  let reporting: Promise<void> = Promise.resolve();
  try {
    for (let step = start.nextStep; step <= task.maxSteps; step++) {
      if (signal.aborted) return { kind: "stopped", steps: step - 1 };
      const stepStarted = performance.now();
      const attributes = { "bas.step": step };
      let snapshot: PageSnapshot;
      try {
        snapshot = await inSpan("agent.observe", { attributes }, () => observe(browser, options, task.vision));
      } catch (err) {
        if (browser.isConnected()) throw err;
        // Nothing was decided yet: the same step again, on the browser as it is now.
        await reconnect(err);
        step--;
        continue;
      }
      // The step's screenshot (for the record) is taken while the model thinks, unless the model needed it already;
      // it is awaited before acting, so it shows the page the model saw and never races a navigation.
      const screenshot: Promise<Uint8Array | undefined> =
        snapshot.screenshot || !options.screenshots ? Promise.resolve(snapshot.screenshot) : browser.screenshot();
      lastPage = redact(renderSnapshot(snapshot, options.maxObserveChars));
      let reply: ChatResult;
      try {
        reply = await inSpan("agent.decide", { attributes }, () =>
          model.call({
            messages: stepMessages({
              task: task.task,
              earlierTurns: task.earlierTurns,
              mode: task.mode,
              secretKeys: task.secretKeys,
              secretDomains: task.secretDomains,
              allowedDomains: task.allowedDomains,
              workspace: !!deps.workspace,
              ...(deps.workspace && task.attachedFiles?.length ? { attachedFiles: task.attachedFiles } : {}),
              ...(deps.mailbox && task.inboxEmail ? { inboxEmail: task.inboxEmail } : {}),
              step,
              maxSteps: task.maxSteps,
              history: renderHistory(records, DEFAULT_HISTORY_OPTIONS),
              page: lastPage,
              notes,
              ...(task.vision && snapshot.screenshot ? { screenshot: snapshot.screenshot } : {}),
              today: deps.now().toISOString().slice(0, 10),
            }),
            tools,
            signal,
          }),
        );
      } catch (err) {
        if (signal.aborted) return { kind: "stopped", steps: step - 1 };
        if (err instanceof BudgetExceededError) {
          return {
            kind: "completed",
            success: false,
            output: null,
            summary: err.message,
            steps: step - 1,
            records,
            lastPage,
          };
        }
        throw err;
      }
      const shot = options.screenshots ? await screenshot.catch(() => undefined) : undefined;
      // The connection broke while the model thought: nothing was done yet. In the same browser the plan still fits
      // the page (element indexes live in the page); in a new one it was made for pages that are gone: decide again.
      if (!browser.isConnected() && (await reconnect()).fresh) {
        step--;
        continue;
      }

      await reporting;
      const traced = trace.length;
      const result = await inSpan("agent.act", { attributes }, () =>
        runToolCalls(reply, {
          step,
          task,
          snapshot,
          deps: { ...deps, browser },
          trace,
          schemaFailures,
          secrets: secretValues,
        }),
      );
      notes = result.correction ? [result.correction] : [];
      if (result.correction) schemaFailures++;
      result.record.url = redact(snapshot.url);
      records.push(result.record);
      reporting = deps.recordStep({
        step,
        summary: redact(summarizeStep(result.summaries)),
        messages: [...notices, ...result.messages],
        ...(shot ? { screenshot: shot } : {}),
        memory: {
          record: result.record,
          trace: trace.slice(traced),
          ...(result.correction ? { correction: result.correction } : {}),
        },
      });
      // Handled here so it is not an unhandled rejection meanwhile; whoever awaits it next still gets the error.
      reporting.catch(() => undefined);
      notices = [];
      deps.metrics?.stepTaken((performance.now() - stepStarted) / 1000);
      if (result.finished) return { kind: "completed", ...result.finished, steps: step, records, lastPage };
      if (result.browserLost) await reconnect();
    }
    return {
      kind: "completed",
      success: false,
      output: null,
      summary: `Stopped: the step limit of ${task.maxSteps} steps was reached before the task was done`,
      steps: task.maxSteps,
      records,
      lastPage,
    };
  } finally {
    await reporting;
  }
}

async function observe(browser: BrowserDriver, options: AgentOptions, vision: boolean): Promise<PageSnapshot> {
  const request = { maxChars: options.maxObserveChars, screenshot: vision };
  try {
    return await browser.observe(request);
  } catch (err) {
    // A navigation that was still going on destroys the page's context mid-observation: look once more.
    if (!browser.isConnected()) throw err;
    await new Promise((resolve) => setTimeout(resolve, 300));
    return browser.observe(request);
  }
}
