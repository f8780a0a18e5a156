import type { EventEnvelope } from "@bas/event-store";
import type { SessionEvent } from "./events";

/** One model call as reported: what a new attempt republishes so that billing surely has it. */
export interface ReportedUsage {
  usageId: string;
  inputTokens: number;
  outputTokens: number;
  occurredAt: string;
}

/** What the attempts of a task did so far: where the next attempt continues from. */
export interface TaskProgress {
  /** The latest attempt started; 0 before any. */
  attempt: number;
  /** The highest step recorded; 0 when none. */
  lastStep: number;
  /** The agent's record of each step that has one, in step order. */
  steps: { step: number; agentRecord: string }[];
  inputTokens: number;
  outputTokens: number;
  lastUsage: ReportedUsage | null;
}

/** Folds the session's events of one task into its progress. Pure. */
export function taskProgress(events: readonly EventEnvelope<SessionEvent>[], taskId: string): TaskProgress {
  const progress: TaskProgress = {
    attempt: 0,
    lastStep: 0,
    steps: [],
    inputTokens: 0,
    outputTokens: 0,
    lastUsage: null,
  };
  for (const event of events) {
    if (!("taskId" in event.data) || event.data.taskId !== taskId) continue;
    switch (event.type) {
      case "TaskStarted":
        progress.attempt = Math.max(progress.attempt, event.data.attempt);
        break;
      case "StepRecorded":
        progress.lastStep = Math.max(progress.lastStep, event.data.step);
        if (event.data.agentRecord) progress.steps.push({ step: event.data.step, agentRecord: event.data.agentRecord });
        break;
      case "UsageReported": {
        const { usageId, inputTokens, outputTokens } = event.data;
        if (!usageId) {
          // The task's totals, as older runners reported them.
          progress.inputTokens = inputTokens;
          progress.outputTokens = outputTokens;
          break;
        }
        progress.inputTokens += inputTokens;
        progress.outputTokens += outputTokens;
        progress.lastUsage = { usageId, inputTokens, outputTokens, occurredAt: event.occurredAt };
        break;
      }
    }
  }
  progress.steps.sort((a, b) => a.step - b.step);
  return progress;
}
