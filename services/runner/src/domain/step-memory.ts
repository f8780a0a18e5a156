import { clip } from "./clip";
import type { ActionOutcome, StepRecord } from "./history";
import type { TraceEntry } from "./replay-script";

/** A message of a step as the sessions service stores it. */
export interface StepMessage {
  role: "ai" | "human";
  type: string;
  data: string;
  summary?: string;
  hidden: boolean;
}

/**
 * What the agent keeps of one step. It rides with the step's report (`agent_record`), so that a later attempt of the
 * task rebuilds the agent's history from it and continues instead of starting over.
 */
export interface StepMemory {
  record: StepRecord;
  /** Replayable actions the step added (code mode). */
  trace: TraceEntry[];
  /** What the next step must be told (an answer that did not match the output schema). */
  correction?: string;
  /** The browser the step ran in: in another browser, the pages of this step are gone. */
  browserId: string;
}

/**
 * The step an attempt is about to act on, written down before its first action: if the attempt dies while acting,
 * the next attempt records it with an unknown outcome instead of letting the model do it a second time.
 */
export interface PendingStep {
  step: number;
  browserId: string;
  summary: string;
  /** The model's plan and each action it asked for. */
  messages: StepMessage[];
  /** The step for the history; its actions' results are not known yet. */
  record: StepRecord;
}

/** A recorded step: what the session shows and what the agent remembers of it. */
export interface FinishedStep {
  step: number;
  summary: string;
  messages: StepMessage[];
  memory: StepMemory;
}

export const UNKNOWN_OUTCOME =
  "The task was interrupted while this ran (its runner or its connection to the browser went away): it may or may not have taken effect. Look at the page before doing it again.";

/** Results longer than the history ever shows are not worth keeping. */
const MAX_RESULT_CHARS = 4_000;
const MAX_THOUGHT_CHARS = 1_000;

function compactRecord(record: StepRecord): StepRecord {
  return {
    ...record,
    ...(record.thought ? { thought: clip(record.thought, MAX_THOUGHT_CHARS) } : {}),
    actions: record.actions.map((a) => ({ ...a, call: clip(a.call, 400), result: clip(a.result, MAX_RESULT_CHARS) })),
  };
}

export function encodeMemory(memory: StepMemory): string {
  return JSON.stringify({ ...memory, record: compactRecord(memory.record) });
}

const isAction = (a: unknown): a is ActionOutcome =>
  !!a &&
  typeof a === "object" &&
  typeof (a as ActionOutcome).call === "string" &&
  typeof (a as ActionOutcome).result === "string";

/** The memory of a recorded step, or undefined when it is not one (written by another version, damaged). */
export function decodeMemory(json: string): StepMemory | undefined {
  try {
    const value = JSON.parse(json) as Partial<StepMemory>;
    const record = value?.record;
    if (!record || typeof record.step !== "number" || !Array.isArray(record.actions)) return undefined;
    if (!record.actions.every(isAction)) return undefined;
    return {
      record,
      trace: Array.isArray(value.trace) ? value.trace : [],
      ...(typeof value.correction === "string" ? { correction: value.correction } : {}),
      browserId: typeof value.browserId === "string" ? value.browserId : "",
    };
  } catch {
    return undefined;
  }
}

/** The pending step of an attempt that died while acting, as a recorded step: each action's outcome unknown. */
export function interruptedStep(pending: PendingStep): FinishedStep {
  const actions = pending.record.actions.map((a) => ({ ...a, result: UNKNOWN_OUTCOME, error: true }));
  return {
    step: pending.step,
    summary: pending.summary,
    messages: [...pending.messages, { role: "ai", type: "browser_action_error", data: UNKNOWN_OUTCOME, hidden: false }],
    memory: { record: { ...pending.record, actions }, trace: [], browserId: pending.browserId },
  };
}
