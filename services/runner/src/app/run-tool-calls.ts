import { type Action, parseToolCall } from "../domain/actions";
import type { StepRecord } from "../domain/history";
import type { PageSnapshot } from "../domain/page-state";
import { UNKNOWN_OUTCOME } from "../domain/step-memory";
import { summarizeAction, summarizeStep } from "../domain/step-summary";
import { type AgentDeps, type AgentTask, type PlannedStep, type StepMessage, toolAccess } from "./agent-types";
import { BrowserGoneError } from "./browser-errors";
import type { TraceEntry } from "./browser-driver";
import { finishTask } from "./finish-task";
import type { ChatResult } from "./ports";
import { runAction } from "./run-action";

export interface ToolCallContext {
  step: number;
  task: AgentTask;
  snapshot: PageSnapshot;
  deps: AgentDeps;
  /** Replayable actions so far (code mode). */
  trace: TraceEntry[];
  /** Non-conforming structured answers so far. */
  schemaFailures: number;
  secrets(): Promise<Record<string, string>>;
}

export interface StepResult {
  record: StepRecord;
  messages: StepMessage[];
  summaries: string[];
  /** The task is over: `done` was accepted. */
  finished?: { success: boolean; output: unknown; summary: string };
  /** `done` was refused (schema mismatch): tell the model this next step. */
  correction?: string;
  /** The connection to the browser broke during an action: the step ends there, with that outcome unknown. */
  browserLost?: boolean;
}

const NO_TOOL_CALL =
  "You answered without calling a tool. Every turn must call at least one tool; call done when the task is finished.";
const NOT_DONE_YET = "(not done yet)";

function withoutName(action: Action): Record<string, unknown> {
  const { name: _name, ...args } = action;
  return args;
}

/** One tool call of the model, parsed: an action to run, or why it cannot be run. */
type PlannedCall =
  | { ok: true; compact: string; summary: string; action: Action }
  | { ok: false; compact: string; summary: string; error: string };

const actionMessage = (action: Action, summary: string): StepMessage => ({
  role: "ai",
  type: "browser_action",
  data: JSON.stringify({ action: action.name, ...withoutName(action) }),
  summary,
  hidden: false,
});

/** The calls of a reply in order, up to the first one that cannot be parsed (later ones are not run). */
function planCalls(reply: ChatResult, ctx: ToolCallContext): PlannedCall[] {
  const { redact } = ctx.deps;
  const planned: PlannedCall[] = [];
  for (const call of reply.toolCalls) {
    const compact = redact(`${call.name} ${call.arguments.replace(/\s+/g, " ").trim()}`);
    const parsed = parseToolCall(call.name, call.arguments, ctx.task.mode, toolAccess(ctx.deps));
    if (!parsed.ok) {
      planned.push({ ok: false, compact, summary: `Invalid action ${call.name}`.slice(0, 80), error: parsed.error });
      break;
    }
    const describe = (index: number) => ctx.snapshot.elements.get(index);
    planned.push({
      ok: true,
      compact,
      summary: redact(summarizeAction(parsed.action, describe)),
      action: parsed.action,
    });
  }
  return planned;
}

/** What is about to be done, for the write-ahead record: the plan and the actions, none of them done yet. */
function plannedStep(ctx: ToolCallContext, thought: string | undefined, planned: PlannedCall[]): PlannedStep {
  const actions = planned.filter((p): p is Extract<PlannedCall, { ok: true }> => p.ok);
  return {
    step: ctx.step,
    summary: ctx.deps.redact(summarizeStep(actions.map((a) => a.summary))),
    messages: [
      ...(thought ? [{ role: "ai" as const, type: "planning", data: thought, hidden: false }] : []),
      ...actions.map((a) => actionMessage(a.action, a.summary)),
    ],
    record: {
      step: ctx.step,
      ...(thought ? { thought } : {}),
      actions: actions.map((a) => ({ call: a.compact, summary: a.summary, result: NOT_DONE_YET, error: false })),
    },
  };
}

/**
 * Runs the model's tool calls of one step in order, and says what happened in the step record (for the history)
 * and as messages (for the session). Before the first action it writes down what it is about to do
 * (`beforeActing`). It stops at the first error, after `done`, and after a page change when more calls follow (they
 * were chosen for a page that is gone).
 */
export async function runToolCalls(reply: ChatResult, ctx: ToolCallContext): Promise<StepResult> {
  const { deps, task } = ctx;
  const { redact } = deps;
  const thought = reply.content?.trim() ? redact(reply.content.trim()) : undefined;
  const result: StepResult = {
    record: { step: ctx.step, actions: [], ...(thought ? { thought } : {}) },
    messages: thought ? [{ role: "ai", type: "planning", data: thought, hidden: false }] : [],
    summaries: [],
  };
  const message = (type: string, data: string, summary?: string) =>
    result.messages.push({ role: "ai", type, data: redact(data), ...(summary ? { summary } : {}), hidden: false });
  const fail = (call: string, summary: string, error: string) => {
    result.record.actions.push({ call, summary, result: error, error: true });
    message("browser_action_error", error, summary);
    result.summaries.push(summary);
  };

  const planned = planCalls(reply, ctx);
  await deps.beforeActing?.(plannedStep(ctx, thought, planned));
  if (planned.length === 0) fail("(no tool call)", "No action", NO_TOOL_CALL);
  for (const [i, call] of planned.entries()) {
    const { compact, summary } = call;
    if (!call.ok) {
      fail(compact, summary, call.error);
      break;
    }
    const action = call.action;
    result.messages.push(actionMessage(action, summary));
    result.summaries.push(summary);

    if (action.name === "done") {
      const finish = await finishTask(
        action,
        { task, trace: ctx.trace, schemaFailures: ctx.schemaFailures, secrets: ctx.secrets },
        deps,
      );
      if (finish.kind === "retry") {
        result.correction = finish.note;
        result.record.actions.push({ call: compact, summary, result: finish.note, error: true });
        message("browser_action_error", finish.note, summary);
      } else {
        message("completion", finish.text, redact(finish.summary));
        result.finished = { success: finish.success, output: finish.output, summary: redact(finish.summary) };
      }
      break;
    }

    let outcome: Awaited<ReturnType<typeof runAction>>;
    try {
      outcome = await runAction(action, compact, summary, {
        browser: deps.browser,
        model: deps.model,
        redact,
        signal: deps.signal,
        ...(task.mode.codeMode ? { trace: ctx.trace } : {}),
        secrets: ctx.secrets,
        secretDomains: task.secretDomains,
        allowedDomains: task.allowedDomains,
        extractMaxChars: deps.options.extractMaxChars,
        workspace: deps.workspace,
        mailbox: deps.mailbox,
      });
    } catch (err) {
      if (!(err instanceof BrowserGoneError)) throw err;
      result.record.actions.push({ call: compact, summary, result: UNKNOWN_OUTCOME, error: true });
      message("browser_action_error", UNKNOWN_OUTCOME);
      result.browserLost = true;
      break;
    }
    result.record.actions.push(outcome);
    message(outcome.error ? "browser_action_error" : "browser_action_result", outcome.result);
    const rest = planned.length - i - 1;
    if (outcome.error || deps.signal.aborted) break;
    if (outcome.pageChanged && rest > 0) {
      result.record.actions.push({
        call: "(skipped)",
        summary: "Skipped",
        result: `${rest} later action(s) of this step were not run: the page changed. Look at the new page first.`,
        error: true,
      });
      break;
    }
  }
  return result;
}
