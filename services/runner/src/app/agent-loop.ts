import { inSpan } from "@bas/service-kit/tracing";
import { toolDefinitions } from "../domain/actions";
import { DEFAULT_HISTORY_OPTIONS, renderHistory, type StepRecord } from "../domain/history";
import { type PageSnapshot, renderSnapshot } from "../domain/page-state";
import { stepMessages } from "../domain/prompt";
import { summarizeStep } from "../domain/step-summary";
import type { AgentDeps, AgentOptions, AgentOutcome, AgentTask } from "./agent-types";
import type { BrowserDriver, TraceEntry } from "./browser-driver";
import { BudgetExceededError, type ChatResult } from "./ports";
import { runToolCalls } from "./run-tool-calls";

export type { AgentDeps, AgentOptions, AgentOutcome, AgentTask, RecordedStep, StepMessage } from "./agent-types";

/** Observe → decide → act, one model call per step, until `done`, the step limit, a stop or the budget. */
export async function runAgent(task: AgentTask, deps: AgentDeps): Promise<AgentOutcome> {
  const { browser, model, redact, signal, options } = deps;
  const tools = toolDefinitions(task.mode);
  const records: StepRecord[] = [];
  const trace: TraceEntry[] = [];
  let notes: string[] = [];
  let schemaFailures = 0;
  let secrets: Record<string, string> | undefined;
  const secretValues = async () => {
    secrets ??= await deps.secrets();
    return secrets;
  };

  for (let step = 1; step <= task.maxSteps; step++) {
    if (signal.aborted) return { kind: "stopped", steps: step - 1 };
    const attributes = { "bas.step": step };
    const snapshot = await inSpan("agent.observe", { attributes }, () => observe(browser, options, task.vision));
    // The step's screenshot (for the record) is taken while the model thinks, unless the model needed it already;
    // it is awaited before acting, so it shows the page the model saw and never races a navigation.
    const screenshot: Promise<Uint8Array | undefined> =
      snapshot.screenshot || !options.screenshots ? Promise.resolve(snapshot.screenshot) : browser.screenshot();
    let reply: ChatResult;
    try {
      reply = await inSpan("agent.decide", { attributes }, () =>
        model.call({
          messages: stepMessages({
            task: task.task,
            mode: task.mode,
            secretKeys: task.secretKeys,
            step,
            maxSteps: task.maxSteps,
            history: renderHistory(records, DEFAULT_HISTORY_OPTIONS),
            page: redact(renderSnapshot(snapshot, options.maxObserveChars)),
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
        return { kind: "completed", success: false, output: null, summary: err.message, steps: step - 1 };
      }
      throw err;
    }
    const shot = options.screenshots ? await screenshot : undefined;

    const result = await inSpan("agent.act", { attributes }, () =>
      runToolCalls(reply, { step, task, snapshot, deps, trace, schemaFailures, secrets: secretValues }),
    );
    notes = result.correction ? [result.correction] : [];
    if (result.correction) schemaFailures++;
    result.record.url = redact(snapshot.url);
    records.push(result.record);
    await deps.recordStep({
      step,
      summary: redact(summarizeStep(result.summaries)),
      messages: result.messages,
      ...(shot ? { screenshot: shot } : {}),
    });
    if (result.finished) return { kind: "completed", ...result.finished, steps: step };
  }
  return {
    kind: "completed",
    success: false,
    output: null,
    summary: `Stopped: the step limit of ${task.maxSteps} steps was reached before the task was done`,
    steps: task.maxSteps,
  };
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
