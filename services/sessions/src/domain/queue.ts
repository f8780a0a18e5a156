import type { AttachedFile, QueueMode, SessionEvent } from "./events";

/**
 * A v4 session's message queue. A message waits (`pending`) while the session works on a run; when the session has
 * nothing to do it becomes the next run (`dispatching`), and `consumed` once that run starts. It ends `cancelled`
 * (the caller took it back, or cancelled its run before it started), `superseded` (a later interrupt cancelled its
 * run before it started) or `failed` (its session ended first, or its run failed before it started).
 */
export type QueuedMessageStatus = "pending" | "dispatching" | "consumed" | "cancelled" | "superseded" | "failed";

export interface QueuedMessage {
  /** 1, 2, 3… within the session. */
  id: number;
  text: string;
  mode: QueueMode;
  status: QueuedMessageStatus;
  /** The run the message became, once dispatched. */
  runId: string | null;
  /** The caller's `X-V4-Queue-Deduplicate`: a send with the same key is answered with this message. */
  dedupeKey: string | null;
  /** Files of the workspace its run is pointed to. */
  attachedFiles?: AttachedFile[];
  createdAt: string;
  updatedAt: string;
}

/**
 * Where a message sent with `interrupt` cut a run short (the official client's "steering cutoff"): a client showing
 * the conversation again freezes that run's transcript at this moment, without fetching every interrupting message.
 */
export interface SteeringCutoff {
  sourceRunId: string;
  /** When the interrupting message was accepted. */
  createdAt: string;
}

export interface MessageQueue {
  nextId: number;
  /** Every message still waiting or on its way, and the last ended ones (see QUEUE_LIMITS.kept). */
  messages: QueuedMessage[];
  /** One per interrupted run, oldest first (absent in sessions folded before there were any). */
  steeringCutoffs?: SteeringCutoff[];
}

export const QUEUE_LIMITS = {
  /** Messages that may wait at once; one more is refused (429). */
  pending: 100,
  /** Ended messages the session remembers (readable by id, found again by their dedupe key); older ones drop off. */
  kept: 100,
  /** Interrupted runs whose cutoff the session remembers; each interrupt starts a paid run, so this is far off. */
  steeringCutoffs: 1_000,
};

export const emptyQueue = (): MessageQueue => ({ nextId: 1, messages: [] });

const ENDED: readonly QueuedMessageStatus[] = ["consumed", "cancelled", "superseded", "failed"];

/** The message to run next: an interrupt before anything that waits in line, else the oldest. */
export function nextPending(queue: MessageQueue): QueuedMessage | undefined {
  const pending = queue.messages.filter((m) => m.status === "pending");
  return pending.find((m) => m.mode === "interrupt") ?? pending[0];
}

export const pendingCount = (queue: MessageQueue) => queue.messages.filter((m) => m.status === "pending").length;

function setStatus(
  queue: MessageQueue,
  at: string,
  which: (m: QueuedMessage) => boolean,
  change: Partial<QueuedMessage>,
): MessageQueue {
  let changed = false;
  const messages = queue.messages.map((m) => {
    if (!which(m)) return m;
    changed = true;
    return { ...m, ...change, updatedAt: at };
  });
  if (!changed) return queue;
  // Ended messages beyond the last QUEUE_LIMITS.kept are forgotten, so the state stays small however long it lives.
  const ended = messages.filter((m) => ENDED.includes(m.status));
  const dropped = new Set(ended.slice(0, Math.max(0, ended.length - QUEUE_LIMITS.kept)));
  return { ...queue, messages: messages.filter((m) => !dropped.has(m)) };
}

/** What one session event does to its queue. Pure; folded into the aggregate's state and so into its read model. */
export function evolveQueue(queue: MessageQueue, event: SessionEvent, at: string): MessageQueue {
  const ofRun = (taskId: string) => (m: QueuedMessage) => m.runId === taskId && m.status === "dispatching";
  switch (event.type) {
    case "MessageQueued": {
      const { messageId, text, mode, dedupeKey, attachedFiles } = event.data;
      const message: QueuedMessage = {
        id: messageId,
        text,
        mode,
        status: "pending",
        runId: null,
        dedupeKey,
        ...(attachedFiles?.length ? { attachedFiles } : {}),
        createdAt: at,
        updatedAt: at,
      };
      return { ...queue, nextId: messageId + 1, messages: [...queue.messages, message] };
    }
    case "QueuedMessageCancelled":
      return setStatus(queue, at, (m) => m.id === event.data.messageId, { status: "cancelled" });
    case "TaskDispatched": {
      const { queuedMessageId, taskId } = event.data;
      if (queuedMessageId === undefined) return queue;
      return setStatus(queue, at, (m) => m.id === queuedMessageId, { status: "dispatching", runId: taskId });
    }
    case "TaskStarted":
    case "TaskCompleted":
      return setStatus(queue, at, ofRun(event.data.taskId), { status: "consumed" });
    case "TaskFailed":
      return setStatus(queue, at, ofRun(event.data.taskId), { status: "failed" });
    case "TaskStopped": {
      const { taskId, reason } = event.data;
      if (reason !== "interrupted") return setStatus(queue, at, ofRun(taskId), { status: "cancelled" });
      // An interrupt stops the run in the append that queues its message, so this moment is the message's.
      const cutoffs = [...(queue.steeringCutoffs ?? []), { sourceRunId: taskId, createdAt: at }];
      const superseded = setStatus(queue, at, ofRun(taskId), { status: "superseded" });
      return { ...superseded, steeringCutoffs: cutoffs.slice(-QUEUE_LIMITS.steeringCutoffs) };
    }
    case "SessionStopped":
    case "SessionTimedOut":
    case "SandboxFailed":
    case "SessionDeleted":
      // Nothing will run them any more.
      return setStatus(queue, at, (m) => m.status === "pending" || m.status === "dispatching", { status: "failed" });
    default:
      return queue;
  }
}
