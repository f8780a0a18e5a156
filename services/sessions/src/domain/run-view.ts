import type { JsonValue, SessionEvent } from "./events";

/** A v4 run's status: its task's progress as the run API names it. */
export type RunStatus = "queued" | "dispatching" | "running" | "completed" | "failed" | "cancelled";
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ["completed", "failed", "cancelled"];

/** What one session event does to the run it is about, for the v4 read model. */
export interface RunChange {
  runId: string;
  status?: RunStatus;
  title?: string;
  result?: string;
  error?: string;
  /** The judge's verdict on a completed run. */
  judgement?: JsonValue;
  /** Tokens of one model call to add, or (older events) the run's totals so far to replace them with. */
  tokens?: { input: number; output: number; replace: boolean };
  /** The run event callers read (`run.*`); none for changes they do not see as events. */
  event?: { type: string; data: Record<string, JsonValue> };
}

/** The run's result as text: the agent's output as it gave it when text, else its JSON. */
export function resultText(output: JsonValue): string {
  return typeof output === "string" ? output : JSON.stringify(output);
}

/**
 * The change an event of a v4 session makes to a run. `current` is the session's latest run (the one a sandbox
 * event is about) with its status, and `sandboxReady` whether the session's browser is up. Pure.
 */
export function runChangeOf(
  event: SessionEvent,
  current: { id: string; status: RunStatus } | null,
  sandboxReady: boolean,
): RunChange | null {
  switch (event.type) {
    case "TaskDispatched": {
      const { taskId, task } = event.data;
      const status = sandboxReady ? "dispatching" : "queued";
      return { runId: taskId, status, event: { type: "run.created", data: { task, status } } };
    }
    case "SandboxReady":
      if (current?.status !== "queued") return null;
      return { runId: current.id, status: "dispatching", event: { type: "run.dispatching", data: {} } };
    case "TaskStarted": {
      const { taskId, title, attempt } = event.data;
      return { runId: taskId, status: "running", title, event: { type: "run.started", data: { title, attempt } } };
    }
    case "StepRecorded": {
      const { taskId, step, summary, messages } = event.data;
      const shown = messages
        .filter((m) => !m.hidden)
        .map(({ role, type, data, summary }) => ({ role, type, data, summary }));
      return { runId: taskId, event: { type: "run.step", data: { step, summary, messages: shown } } };
    }
    case "UsageReported": {
      const { taskId, inputTokens, outputTokens, usageId } = event.data;
      return { runId: taskId, tokens: { input: inputTokens, output: outputTokens, replace: !usageId } };
    }
    case "TaskCompleted": {
      const { taskId, output, success, judgement } = event.data;
      const result = resultText(output);
      const data: Record<string, JsonValue> = { result, success };
      if (judgement === undefined)
        return { runId: taskId, status: "completed", result, event: { type: "run.completed", data } };
      data.judgement = judgement;
      return { runId: taskId, status: "completed", result, judgement, event: { type: "run.completed", data } };
    }
    case "TaskFailed": {
      const { taskId, error } = event.data;
      return { runId: taskId, status: "failed", error, event: { type: "run.failed", data: { error } } };
    }
    case "TaskStopped": {
      const { taskId, reason, summary } = event.data;
      // A run that reached its cost cap did not finish its work: it failed, and says why.
      if (reason === "cost_cap") {
        return {
          runId: taskId,
          status: "failed",
          error: summary,
          event: { type: "run.failed", data: { error: summary } },
        };
      }
      return { runId: taskId, status: "cancelled", event: { type: "run.cancelled", data: { reason, summary } } };
    }
    default:
      return null;
  }
}

/**
 * The status a caller sees: a run that ended while billing has not charged every token it reported still shows
 * "running", so that a terminal status always comes with final costs. Billing away for longer than `waitMs` does not
 * hide the end for ever.
 */
export function shownRunStatus(
  run: { status: RunStatus; reportedTokens: number; chargedTokens: number; updatedAt: Date },
  now: Date,
  waitMs: number,
): RunStatus {
  if (!TERMINAL_RUN_STATUSES.includes(run.status) || run.chargedTokens >= run.reportedTokens) return run.status;
  return now.getTime() - run.updatedAt.getTime() >= waitMs ? run.status : "running";
}
