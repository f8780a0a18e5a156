import { type Action, parseToolCall } from "../domain/actions";
import type { StepRecord } from "../domain/history";
import type { PageSnapshot } from "../domain/page-state";
import { summarizeAction } from "../domain/step-summary";
import type { AgentDeps, AgentTask, StepMessage } from "./agent-types";
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
}

const NO_TOOL_CALL =
  "You answered without calling a tool. Every turn must call at least one tool; call done when the task is finished.";

function withoutName(action: Action): Record<string, unknown> {
  const { name: _name, ...args } = action;
  return args;
}

/**
 * Runs the model's tool calls of one step in order, and says what happened in the step record (for the history)
 * and as messages (for the session). It stops at the first error, after `done`, and after a page change when more
 * calls follow (they were chosen for a page that is gone).
 */
export async function runToolCalls(reply: ChatResult, ctx: ToolCallContext): Promise<StepResult> {
  const { deps, task, snapshot } = ctx;
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

  if (reply.toolCalls.length === 0) fail("(no tool call)", "No action", NO_TOOL_CALL);
  for (const [i, call] of reply.toolCalls.entries()) {
    const compact = redact(`${call.name} ${call.arguments.replace(/\s+/g, " ").trim()}`);
    const parsed = parseToolCall(call.name, call.arguments, task.mode);
    if (!parsed.ok) {
      fail(compact, `Invalid action ${call.name}`.slice(0, 80), parsed.error);
      break;
    }
    const action = parsed.action;
    const summary = redact(summarizeAction(action, (index) => snapshot.elements.get(index)));
    message("browser_action", JSON.stringify({ action: action.name, ...withoutName(action) }), summary);
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

    const outcome = await runAction(action, compact, summary, {
      browser: deps.browser,
      model: deps.model,
      redact,
      signal: deps.signal,
      ...(task.mode.codeMode ? { trace: ctx.trace } : {}),
      secrets: ctx.secrets,
      extractMaxChars: deps.options.extractMaxChars,
    });
    result.record.actions.push(outcome);
    message(outcome.error ? "browser_action_error" : "browser_action_result", outcome.result);
    const rest = reply.toolCalls.length - i - 1;
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
