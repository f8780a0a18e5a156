import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { StreamNames } from "@bas/event-store";

/** Why the agent must stop working a task. */
export type StopReason = "task_stopped" | "session_ended" | "task_ended";

/** Session events after which the session has no more use for its runner. */
const SESSION_ENDED = new Set(["SessionStopped", "SessionTimedOut", "SessionDeleted", "SandboxFailed"]);

/** The reason to stop, if this session event is one. */
export function stopReasonOf(event: { type?: string; data?: { taskId?: string } }, taskId: string): StopReason | null {
  if (!event?.type) return null;
  if (SESSION_ENDED.has(event.type)) return "session_ended";
  if (event.type === "TaskStopped" && event.data?.taskId === taskId) return "task_stopped";
  // Someone else finished this task (another attempt): this one is stale.
  if ((event.type === "TaskCompleted" || event.type === "TaskFailed") && event.data?.taskId === taskId)
    return "task_ended";
  return null;
}

export interface SessionWatch {
  close(): void;
}

/**
 * Listens (core NATS, no consumer state) to the session's events while its task runs, and calls `onStop` once
 * when the task is stopped or the session ends.
 */
export function watchSession(
  nc: NatsConnection,
  streams: StreamNames,
  sessionId: string,
  taskId: string,
  onStop: (reason: StopReason) => void,
): SessionWatch {
  let fired = false;
  const sub: Subscription = nc.subscribe(streams.events.subject("session", sessionId), {
    callback: (err, msg) => {
      if (err || fired) return;
      let event: unknown;
      try {
        event = msg.json();
      } catch {
        return;
      }
      const reason = stopReasonOf(event as { type?: string }, taskId);
      if (reason) {
        fired = true;
        onStop(reason);
      }
    },
  });
  return { close: () => sub.unsubscribe() };
}
