import type { EventEnvelope } from "@bas/event-store";
import type {
  AttachedFile,
  CustomProxy,
  JsonValue,
  JudgeSettings,
  ModelParams,
  SecretDomains,
  SessionApi,
  SessionEvent,
  SessionSettings,
  TaskOptions,
} from "./events";
import { emptyQueue, evolveQueue, type MessageQueue } from "./queue";

export type SessionStatus = "created" | "idle" | "running" | "stopped" | "timed_out" | "error";
export type TerminalStatus = "stopped" | "timed_out" | "error";

/** The task the session is working on (or about to, while its sandbox starts). */
export interface CurrentTask {
  id: string;
  task: string;
  sensitiveDataKeys: string[];
  secretDomains: SecretDomains;
  /** The task's own cost cap; null = the session's. */
  maxCostUsd: string | null;
  /** Judge the run when the agent is done (v4). */
  judge?: JudgeSettings;
  /** The run's own model parameters (v4). */
  modelParams?: ModelParams;
  /** The run's own proxy (v4), without its credentials. */
  customProxy?: CustomProxy;
  /** Files of the workspace the run was pointed to (v4). */
  attachedFiles?: AttachedFile[];
  /** The runner reported TaskStarted (for this attempt). */
  started: boolean;
  attempt: number;
  /**
   * Highest step number recorded for the task (-1: none); a report at or below it is a retry. A new attempt goes on
   * from here: it continues the task, it does not start it over.
   */
  lastStep: number;
}

/** A task's tokens, and the last model call counted per attempt (a report at or below it is a retry). */
export interface TaskTokens {
  input: number;
  output: number;
  calls?: Record<string, number>;
}

/** An ended task of the session, as a follow-up task sees it: what was asked and how it ended (both shortened). */
export interface EarlierTurn {
  task: string;
  outcome: string;
}

/** A follow-up sees this many earlier turns at most, each part cut to this many characters. */
export const EARLIER_TURNS = { max: 10, chars: 2_000 };

const cut = (text: string) =>
  text.length > EARLIER_TURNS.chars ? `${text.slice(0, EARLIER_TURNS.chars - 3)}...` : text;

/** The session's turns after its current task ended with `outcome`. */
function withTurn(s: Session, outcome: string): EarlierTurn[] {
  const turns = s.turns ?? [];
  if (!s.task) return turns;
  return [...turns, { task: cut(s.task.task), outcome: cut(outcome) }].slice(-EARLIER_TURNS.max);
}

/** How the last task ended; lets a retried final report be answered as done instead of refused. */
export interface FinishedTask {
  id: string;
  outcome: "completed" | "failed" | "stopped";
}

interface SessionData extends TaskOptions {
  id: string;
  api: SessionApi;
  settings: SessionSettings;
  idempotencyKey: string | null;
  preparationId: string | null;
  createdAt: string;
  /** Last change of any kind; the inactivity timeout counts from here. */
  updatedAt: string;
  title: string | null;
  output: JsonValue;
  stepCount: number;
  lastStepSummary: string | null;
  isTaskSuccessful: boolean | null;
  browserId: string | null;
  screenshotRef: string | null;
  recordingRefs: string[];
  /** Every task ever dispatched here, oldest first. */
  taskIds: string[];
  /** Token totals per task; the session's totals are their sum. */
  tokens: Record<string, TaskTokens>;
  totalInputTokens: number;
  totalOutputTokens: number;
  finishedTask: FinishedTask | null;
  /** The session's ended tasks, the last few (absent in read-model rows folded before turns were kept). */
  turns?: EarlierTurn[];
  /** Reopened after it timed out and its new browser is not up yet (absent: never reopened). */
  reopened?: boolean;
  /** A v4 session's queued messages (absent on v3 sessions). */
  queue?: MessageQueue;
  /** Mails its temporary mailbox received (absent: none). */
  mailCount?: number;
  deleted: boolean;
}

export type CreatedSession = SessionData & { status: "created"; task: CurrentTask | null };
export type IdleSession = SessionData & { status: "idle"; task: null };
export type RunningSession = SessionData & { status: "running"; task: CurrentTask };
export type EndedSession = SessionData & { status: TerminalStatus; task: null };
export type ActiveSession = CreatedSession | IdleSession | RunningSession;
export type Session = ActiveSession | EndedSession;
export type SessionState = { status: "none" } | Session;

export const TERMINAL_STATUSES: readonly SessionStatus[] = ["stopped", "timed_out", "error"];
export const ACTIVE_STATUSES: readonly SessionStatus[] = ["created", "idle", "running"];

export const initialState = (): SessionState => ({ status: "none" });

export function isTerminal(state: Session): state is EndedSession {
  return TERMINAL_STATUSES.includes(state.status);
}

/** The session after its task ended: a pending task on a starting sandbox leaves it starting. */
function endTask(s: Session, outcome: FinishedTask["outcome"]): Session {
  const finishedTask = s.task ? { id: s.task.id, outcome } : s.finishedTask;
  if (s.status === "created") return { ...s, task: null, finishedTask };
  if (s.status === "running") return { ...s, status: "idle", task: null, finishedTask };
  return { ...s, finishedTask };
}

function onSession(state: SessionState, event: EventEnvelope<SessionEvent>): Session {
  if (state.status !== "none") return { ...state, updatedAt: event.occurredAt };
  throw new Error(`${event.type} for session ${event.aggregateId} that was never created`);
}

/** Folds one event into the session. Pure; also the read model's fold, so the two can never disagree. */
export function evolve(state: SessionState, event: EventEnvelope<SessionEvent>): SessionState {
  const next = evolveSession(state, event);
  if (next.status === "none" || next.api !== "v4") return next;
  const queue = evolveQueue(next.queue ?? emptyQueue(), event, event.occurredAt);
  return queue === next.queue ? next : { ...next, queue };
}

function evolveSession(state: SessionState, event: EventEnvelope<SessionEvent>): SessionState {
  // Mail is not the session's activity: it counts, but leaves `updatedAt` (the inactivity clock) where it was, so
  // that mailing a session never keeps it alive.
  if (event.type === "MailReceived") {
    if (state.status === "none") return onSession(state, event); // throws: a session that was never created
    return { ...state, mailCount: (state.mailCount ?? 0) + 1 };
  }
  if (event.type === "SessionCreated") {
    const { idempotencyKey, preparationId, keepAlive, codeMode, outputSchema, api, ...settings } = event.data;
    return {
      status: "created",
      id: event.aggregateId,
      api: api ?? "v3",
      settings,
      keepAlive,
      codeMode,
      outputSchema,
      idempotencyKey,
      preparationId,
      createdAt: event.occurredAt,
      updatedAt: event.occurredAt,
      task: null,
      title: null,
      output: null,
      stepCount: 0,
      lastStepSummary: null,
      isTaskSuccessful: null,
      browserId: null,
      screenshotRef: null,
      recordingRefs: [],
      taskIds: [],
      tokens: {},
      totalInputTokens: 0,
      totalOutputTokens: 0,
      finishedTask: null,
      turns: [],
      deleted: false,
    };
  }
  const s = onSession(state, event);
  switch (event.type) {
    case "TaskDispatched": {
      const { taskId, task, sensitiveDataKeys, secretDomains, keepAlive, codeMode, outputSchema, maxCostUsd } =
        event.data;
      const { judge, modelParams, customProxy, attachedFiles } = event.data;
      const current: CurrentTask = {
        id: taskId,
        task,
        sensitiveDataKeys,
        secretDomains: secretDomains ?? {},
        maxCostUsd: maxCostUsd ?? null,
        ...(judge ? { judge } : {}),
        ...(modelParams ? { modelParams } : {}),
        ...(customProxy ? { customProxy } : {}),
        ...(attachedFiles?.length ? { attachedFiles } : {}),
        started: false,
        attempt: 0,
        lastStep: -1,
      };
      const next = {
        ...s,
        keepAlive,
        codeMode,
        outputSchema,
        title: null,
        output: null,
        lastStepSummary: null,
        isTaskSuccessful: null,
        taskIds: [...s.taskIds, taskId],
        task: current,
      };
      // On a starting sandbox the task waits; on a ready one the session is running from dispatch on.
      return s.status === "created" ? { ...next, status: "created" } : { ...next, status: "running" };
    }
    case "SandboxReady": {
      const ready = { ...s, browserId: event.data.browserId, ...(s.reopened ? { reopened: false } : {}) };
      if (ready.status !== "created") return ready;
      // A task dispatched at creation is already waiting: go straight to running, never show an idle that a
      // poller would read as "task finished".
      return ready.task ? { ...ready, status: "running", task: ready.task } : { ...ready, status: "idle", task: null };
    }
    case "SandboxFailed": {
      // Why the session ended is what a caller reads here, not in events; a task failed with it says it already.
      const { error } = event.data;
      const said = s.lastStepSummary === `Task failed: ${error}`;
      return { ...s, status: "error", task: null, lastStepSummary: said ? s.lastStepSummary : error };
    }
    case "TaskStarted": {
      if (!s.task) return s;
      // A new attempt (the task was redelivered to another runner) continues the step numbering of the last one.
      const task = { ...s.task, started: true, attempt: Math.max(event.data.attempt, s.task.attempt) };
      return { ...s, status: "running", task, title: event.data.title };
    }
    case "StepRecorded": {
      const { step, summary, screenshotRef } = event.data;
      const task = s.task && s.task.id === event.data.taskId ? { ...s.task, lastStep: step } : s.task;
      return {
        ...s,
        task,
        stepCount: s.stepCount + 1,
        lastStepSummary: summary,
        screenshotRef: screenshotRef ?? s.screenshotRef,
      } as Session;
    }
    case "UsageReported": {
      const { taskId, inputTokens, outputTokens, usageId, attempt, call } = event.data;
      const before = s.tokens[taskId] ?? { input: 0, output: 0 };
      // One call's tokens add up; an older event carries the task's totals so far, which replace the last ones.
      const after: TaskTokens = usageId
        ? {
            input: before.input + inputTokens,
            output: before.output + outputTokens,
            calls: { ...before.calls, [String(attempt ?? 0)]: call ?? 0 },
          }
        : { ...before, input: inputTokens, output: outputTokens };
      return {
        ...s,
        tokens: { ...s.tokens, [taskId]: after },
        totalInputTokens: s.totalInputTokens - before.input + after.input,
        totalOutputTokens: s.totalOutputTokens - before.output + after.output,
      };
    }
    case "TaskCompleted": {
      const { output, success, summary } = event.data;
      const said = typeof output === "string" ? output : JSON.stringify(output);
      const ended = { ...endTask(s, "completed"), turns: withTurn(s, success ? said : `unsuccessful: ${said}`) };
      return { ...ended, output, isTaskSuccessful: success, lastStepSummary: summary ?? s.lastStepSummary };
    }
    case "TaskFailed": {
      const failed = `Task failed: ${event.data.error}`;
      return { ...endTask(s, "failed"), turns: withTurn(s, failed), isTaskSuccessful: false, lastStepSummary: failed };
    }
    case "TaskStopped": {
      const { summary } = event.data;
      return {
        ...endTask(s, "stopped"),
        turns: withTurn(s, summary),
        isTaskSuccessful: false,
        lastStepSummary: summary,
      };
    }
    case "SessionStopped":
      return { ...s, status: "stopped", task: null };
    case "SessionTimedOut":
      return { ...s, status: "timed_out", task: null };
    case "SessionDeleted":
      return { ...s, deleted: true };
    case "RecordingAdded":
      return { ...s, recordingRefs: [...s.recordingRefs, event.data.ref] };
    case "MessageQueued":
    case "QueuedMessageCancelled":
      return s; // the queue's own fold (above) takes them
    case "SessionReopened":
      return { ...s, status: "created", task: null, browserId: null, reopened: true };
  }
}
