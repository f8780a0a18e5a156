import { type FollowEventsDeps, followEvents, type StreamNames } from "@bas/event-store";
import { SESSION_AGGREGATE, SESSION_ENDED_EVENT_TYPES, type SessionEventType, sessions } from "@bas/proto";

/** Why the agent must stop working a task. */
export type StopReason = "task_stopped" | "session_ended" | "task_ended";

const SESSION_ENDED: ReadonlySet<string> = new Set(SESSION_ENDED_EVENT_TYPES);
/** Events that end a task; the one the runner works, if they name it. */
const TASK_ENDS: Partial<Record<SessionEventType, { taskOf(data: unknown): string; reason: StopReason }>> = {
  TaskStopped: { taskOf: (data) => sessions.TaskStopped.fromJSON(data).taskId, reason: "task_stopped" },
  // Someone else finished this task (another attempt): this one is stale.
  TaskCompleted: { taskOf: (data) => sessions.TaskCompleted.fromJSON(data).taskId, reason: "task_ended" },
  TaskFailed: { taskOf: (data) => sessions.TaskFailed.fromJSON(data).taskId, reason: "task_ended" },
};

/** The reason to stop, if this session event is one. */
export function stopReasonOf(event: { type?: string; data?: unknown }, taskId: string): StopReason | null {
  if (!event?.type) return null;
  if (SESSION_ENDED.has(event.type)) return "session_ended";
  const end = TASK_ENDS[event.type as SessionEventType];
  return end && end.taskOf(event.data) === taskId ? end.reason : null;
}

export interface SessionWatch {
  close(): void;
}

/**
 * Follows the session's events stored while its task runs, and calls `onStop` once when the task is stopped or the
 * session ends. None is missed, not even one stored while this runner's NATS connection was down: a runner that did
 * not hear a stop would go on acting in the caller's browser until its next report was refused.
 */
export function watchSession(
  deps: FollowEventsDeps,
  streams: StreamNames,
  sessionId: string,
  taskId: string,
  onStop: (reason: StopReason) => void,
): SessionWatch {
  let fired = false;
  const followed = followEvents(
    deps,
    streams.events.stream,
    streams.events.subject(SESSION_AGGREGATE, sessionId),
    (event) => {
      const reason = fired ? null : stopReasonOf(event, taskId);
      if (reason) {
        fired = true;
        onStop(reason);
      }
    },
  );
  return { close: () => void followed.close() };
}
