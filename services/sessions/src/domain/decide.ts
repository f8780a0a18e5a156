import type { CommandContext, EventEnvelope } from "@bas/event-store";
import {
  IllegalStateError,
  InvalidArgumentError,
  LimitExceededError,
  NotFoundError,
  SupersededError,
} from "@bas/errors";
import type { SessionCommand } from "./commands";
import { SESSION_AGGREGATE, type SessionApi, type SessionEvent, type TaskStopReason } from "./events";
import { MAILBOX_LIMITS } from "./mail";
import { outputShapeProblem } from "./output";
import { emptyQueue, nextPending, pendingCount, QUEUE_LIMITS } from "./queue";
import { type ActiveSession, type CurrentTask, evolve, isTerminal, type Session, type SessionState } from "./state";

const notFound = () => new NotFoundError("Session not found");

/** The caller's view: a session of another project or API, or a deleted one, does not exist. */
function ownedSession(state: SessionState, projectId: string, api: SessionApi): Session {
  if (state.status === "none" || state.deleted || state.settings.projectId !== projectId || state.api !== api) {
    throw notFound();
  }
  return state;
}

/** The runner's view: it may only report on a session that still exists. */
function reportedSession(state: SessionState): Session {
  if (state.status === "none") throw notFound();
  if (state.deleted) throw new IllegalStateError("the session was deleted");
  return state;
}

/** A report about `taskId` is only taken while it is the task in progress: anything else comes from a stale runner. */
function currentTask(session: Session, taskId: string): CurrentTask {
  if (session.task?.id !== taskId) {
    throw new IllegalStateError(`task ${taskId} is not the session's current task (session is ${session.status})`);
  }
  return session.task;
}

/** Retrying the report that ended a task changes nothing; any other report about an ended task is refused. */
const alreadyEnded = (session: Session, taskId: string, outcome: "completed" | "failed") =>
  session.task === null && session.finishedTask?.id === taskId && session.finishedTask.outcome === outcome;

/** After a task ends, a session without keepAlive stops by itself. */
const stopUnlessKeptAlive = (session: Session): SessionEvent[] =>
  session.keepAlive ? [] : [{ type: "SessionStopped", data: { reason: "task_finished" } }];

function stopTask(session: Session, reason: TaskStopReason, summary: string): SessionEvent[] {
  return session.task ? [{ type: "TaskStopped", data: { taskId: session.task.id, reason, summary } }] : [];
}

/** Ends whatever the session is doing and stops it. */
function stopActive(session: ActiveSession, reason: "user" | "deleted"): SessionEvent[] {
  return [
    ...stopTask(session, "session_stopped", "Task stopped: the session was stopped"),
    { type: "SessionStopped", data: { reason } },
  ];
}

/**
 * A v4 conversation outlives its browser: one that timed out (idle too long) takes a new turn by being set up again
 * with a new browser. One the caller stopped or deleted, or whose browser could not be had, stays ended.
 */
const reopen = (session: Session): SessionEvent[] =>
  reopensOnNextTurn(session) ? [{ type: "SessionReopened", data: {} }] : [];

/** Whether a new turn (a run or a message) would set the session up again: it then counts as active once more. */
export function reopensOnNextTurn(state: SessionState): boolean {
  return state.status !== "none" && state.api === "v4" && state.status === "timed_out";
}

/** First line of the task, shortened: the title when the runner did not make one. */
function fallbackTitle(task: string): string {
  const line = task.trim().split("\n")[0] ?? "";
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}

/**
 * Decides what happens to a session. Pure: the clock and the id source come in `context`; refusals are domain
 * errors (NotFoundError, IllegalStateError → 404, 409 for callers and FAILED_PRECONDITION for a stale runner).
 */
export function decide(command: SessionCommand, state: SessionState, context: CommandContext): SessionEvent[] {
  const events = decideCommand(command, state, context);
  return events.length === 0 ? events : [...events, ...drainQueue(state, events, context)];
}

/**
 * A v4 session that these events leave with nothing to do runs its next queued message, in the same append as what
 * freed it: whatever ends a task (a report, a cancel, an interrupt, a crash's redelivery) drains the queue, and a
 * restart between the two can never happen.
 */
function drainQueue(before: SessionState, events: SessionEvent[], context: CommandContext): SessionEvent[] {
  const at = context.now.toISOString();
  const aggregateId = before.status === "none" ? "" : before.id;
  const after = events.reduce(
    (s, e) =>
      evolve(s, {
        ...e,
        id: "",
        aggregateType: SESSION_AGGREGATE,
        aggregateId,
        occurredAt: at,
      } as EventEnvelope<SessionEvent>),
    before,
  );
  if (after.status === "none" || after.api !== "v4" || after.deleted || isTerminal(after) || after.task) return [];
  const next = nextPending(after.queue ?? emptyQueue());
  if (!next) return [];
  const task = {
    taskId: context.newId(),
    task: next.text,
    sensitiveDataKeys: [],
    secretDomains: {},
    keepAlive: true,
    codeMode: false,
    outputSchema: null,
    messageId: context.newId(),
    maxCostUsd: null,
    queuedMessageId: next.id,
    ...(next.attachedFiles ? { attachedFiles: next.attachedFiles } : {}),
  };
  return [{ type: "TaskDispatched", data: task }];
}

function decideCommand(command: SessionCommand, state: SessionState, context: CommandContext): SessionEvent[] {
  switch (command.type) {
    case "CreateSession": {
      if (state.status !== "none") {
        // A retried create with the same key finds its own session: nothing more to do.
        const same =
          command.idempotencyKey !== null &&
          state.idempotencyKey === command.idempotencyKey &&
          state.settings.projectId === command.settings.projectId;
        if (same) return [];
        throw new IllegalStateError("a session with this id already exists");
      }
      const created: SessionEvent = {
        type: "SessionCreated",
        data: {
          ...command.settings,
          ...command.options,
          idempotencyKey: command.idempotencyKey,
          preparationId: command.task ? null : command.preparationId,
          api: command.api,
        },
      };
      if (!command.task) return [created];
      return [created, { type: "TaskDispatched", data: { ...command.task, messageId: context.newId() } }];
    }
    case "DispatchTask": {
      const session = ownedSession(state, command.projectId, command.api);
      if (session.taskIds.includes(command.task.taskId)) return [];
      const reopening = reopen(session);
      if (session.status !== "idle" && !reopening.length) {
        throw new IllegalStateError(`Session is ${session.status}; a task can only be dispatched to an idle session`);
      }
      // A follow-up can keep the session alive but never drops a keep-alive the session already has.
      const keepAlive = command.task.keepAlive || session.keepAlive;
      return [
        ...reopening,
        { type: "TaskDispatched", data: { ...command.task, keepAlive, messageId: context.newId() } },
      ];
    }
    case "StopSession": {
      const session = ownedSession(state, command.projectId, "v3");
      if (isTerminal(session)) return [];
      if (command.strategy === "task") return stopTask(session, "user", "Task stopped by the user");
      return stopActive(session, "user");
    }
    case "CancelTask": {
      const session = ownedSession(state, command.projectId, "v4");
      if (session.task?.id !== command.taskId) return [];
      return stopTask(session, "user", "Task cancelled by the user");
    }
    case "QueueMessage": {
      const session = ownedSession(state, command.projectId, "v4");
      const queue = session.queue ?? emptyQueue();
      if (command.dedupeKey !== null && queue.messages.some((m) => m.dedupeKey === command.dedupeKey)) return [];
      const reopening = reopen(session);
      if (isTerminal(session) && !reopening.length) {
        throw new IllegalStateError(`Session is ${session.status}; it takes no more messages`);
      }
      if (pendingCount(queue) >= QUEUE_LIMITS.pending) {
        throw new LimitExceededError(
          `The session message queue is full (${QUEUE_LIMITS.pending} messages wait); cancel one or wait for a run to end`,
        );
      }
      const { text, interrupt, dedupeKey, attachedFiles } = command;
      const queued: SessionEvent = {
        type: "MessageQueued",
        data: {
          messageId: queue.nextId,
          text,
          mode: interrupt ? "interrupt" : "queue",
          dedupeKey,
          ...(attachedFiles?.length ? { attachedFiles } : {}),
        },
      };
      // The active run makes way; the drain (in decide) runs the message straight after.
      const interrupting = interrupt
        ? stopTask(session, "interrupted", "Task cancelled: a new message interrupted it")
        : [];
      return [...reopening, queued, ...interrupting];
    }
    case "CancelQueuedMessage": {
      const session = ownedSession(state, command.projectId, "v4");
      const message = session.queue?.messages.find((m) => m.id === command.messageId);
      if (!message) throw new NotFoundError("Queued message not found");
      // Taking back a message twice is answered as done.
      if (message.status === "cancelled" && message.runId === null) return [];
      if (message.status !== "pending") {
        const run = message.runId ? ` (run ${message.runId})` : "";
        throw new IllegalStateError(
          `Message ${message.id} is ${message.status}${run}; only a pending message can be cancelled`,
        );
      }
      return [{ type: "QueuedMessageCancelled", data: { messageId: message.id } }];
    }
    case "DeleteSession": {
      const session = ownedSession(state, command.projectId, "v3");
      const deleted: SessionEvent = { type: "SessionDeleted", data: {} };
      return isTerminal(session) ? [deleted] : [...stopActive(session, "deleted"), deleted];
    }
    case "ReportSandboxReady": {
      const session = reportedSession(state);
      if (isTerminal(session)) throw new IllegalStateError(`the session is ${session.status}`);
      if (session.status !== "created") return [];
      return [{ type: "SandboxReady", data: { browserId: command.browserId } }];
    }
    case "ReportSandboxFailed": {
      const session = reportedSession(state);
      if (session.status === "error") return [];
      if (isTerminal(session)) throw new IllegalStateError(`the session is ${session.status}`);
      const failedTask: SessionEvent[] = session.task
        ? [{ type: "TaskFailed", data: { taskId: session.task.id, error: command.error } }]
        : [];
      return [...failedTask, { type: "SandboxFailed", data: { error: command.error } }];
    }
    case "ReportTaskStarted": {
      const task = currentTask(reportedSession(state), command.taskId);
      if (task.started && command.attempt <= task.attempt) return [];
      const title = command.title?.trim() || fallbackTitle(task.task);
      return [{ type: "TaskStarted", data: { taskId: task.id, title, attempt: Math.max(command.attempt, 1) } }];
    }
    case "ReportStep": {
      const task = currentTask(reportedSession(state), command.taskId);
      // An attempt that was superseded (its runner seemed gone and the task went to another) must stop acting.
      if (command.attempt > 0 && command.attempt < task.attempt) {
        throw new SupersededError(`attempt ${command.attempt} of task ${task.id} was superseded by ${task.attempt}`);
      }
      if (command.step <= task.lastStep) return [];
      const messages = command.messages.map((m) => ({ ...m, id: context.newId() }));
      const { taskId, step, summary, screenshotRef, attempt, agentRecord } = command;
      return [{ type: "StepRecorded", data: { taskId, step, summary, screenshotRef, messages, attempt, agentRecord } }];
    }
    case "ReportTaskCompleted": {
      const session = reportedSession(state);
      if (alreadyEnded(session, command.taskId, "completed")) return [];
      const task = currentTask(session, command.taskId);
      const problem = outputShapeProblem(session, command.output);
      if (problem) throw new InvalidArgumentError(problem, { field: ["output"] });
      const { taskId, output, success, summary, judgement } = command;
      // A verdict counts only where one was asked for.
      const judged = task.judge && judgement !== undefined && judgement !== null ? { judgement } : {};
      return [
        { type: "TaskCompleted", data: { taskId, output, success, summary, ...judged } },
        ...stopUnlessKeptAlive(session),
      ];
    }
    case "ReportTaskFailed": {
      const session = reportedSession(state);
      if (alreadyEnded(session, command.taskId, "failed")) return [];
      currentTask(session, command.taskId);
      const data = { taskId: command.taskId, error: command.error };
      return [{ type: "TaskFailed", data }, ...stopUnlessKeptAlive(session)];
    }
    case "ReportUsage": {
      // Usage is a fact even when it arrives just after its task ended, so any task of the session may report it.
      const session = reportedSession(state);
      if (!session.taskIds.includes(command.taskId)) {
        throw new IllegalStateError(`task ${command.taskId} does not belong to this session`);
      }
      const before = session.tokens[command.taskId] ?? { input: 0, output: 0 };
      const { taskId, call } = command;
      if (call) {
        // Calls of an attempt are reported in order: one at or below the last counted is a retry.
        if (call.number <= (before.calls?.[String(call.attempt)] ?? 0)) return [];
        const { inputTokens, outputTokens } = command;
        const data = {
          taskId,
          inputTokens,
          outputTokens,
          usageId: call.usageId,
          attempt: call.attempt,
          call: call.number,
        };
        return [{ type: "UsageReported", data }];
      }
      const inputTokens = Math.max(before.input, command.inputTokens);
      const outputTokens = Math.max(before.output, command.outputTokens);
      if (inputTokens === before.input && outputTokens === before.output) return [];
      return [{ type: "UsageReported", data: { taskId, inputTokens, outputTokens } }];
    }
    case "ReportRecording": {
      const session = reportedSession(state);
      if (session.recordingRefs.includes(command.ref)) return [];
      return [{ type: "RecordingAdded", data: { ref: command.ref } }];
    }
    case "TimeOut": {
      if (state.status === "none" || state.deleted) return [];
      if (state.status !== "idle" && state.status !== "created") return [];
      if (context.now.getTime() - Date.parse(state.updatedAt) < command.timeoutMs) return [];
      return [
        ...stopTask(state, "timed_out", "Task stopped: the session timed out before it started"),
        { type: "SessionTimedOut", data: { inactiveSince: state.updatedAt } },
      ];
    }
    case "StopForBudget": {
      if (state.status === "none" || state.deleted || isTerminal(state) || !state.task) return [];
      if (command.taskId !== null && command.taskId !== state.task.id) return [];
      const cap = command.capUsd ? `the cost cap of ${command.capUsd} USD` : "the cost cap";
      const summary = `Task stopped: ${cap} was reached`;
      return [...stopTask(state, "cost_cap", summary), ...stopUnlessKeptAlive(state)];
    }
    case "ReceiveMail": {
      // Mail to a session that is gone, or to an address that is not (or no longer) its own, has no mailbox.
      const to = command.mail.to.toLowerCase();
      if (state.status === "none" || state.deleted || state.settings.inboxEmail?.toLowerCase() !== to) {
        throw new NotFoundError("No such mailbox");
      }
      if (isTerminal(state)) throw new IllegalStateError(`the session is ${state.status}: its mailbox is closed`);
      if ((state.mailCount ?? 0) >= MAILBOX_LIMITS.mailsPerSession) {
        throw new LimitExceededError(`the mailbox is full (${MAILBOX_LIMITS.mailsPerSession} mails)`);
      }
      return [{ type: "MailReceived", data: { mailId: context.newId(), ...command.mail } }];
    }
    default: {
      const unknown: never = command;
      throw new Error(`unknown command ${(unknown as { type: string }).type}`);
    }
  }
}
