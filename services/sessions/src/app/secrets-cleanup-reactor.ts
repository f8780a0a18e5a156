import type { Reactor } from "@bas/event-store";
import { SESSION_ENDED_EVENT_TYPES } from "@bas/proto";
import { SESSION_AGGREGATE, type SessionEvent } from "../domain/events";
import type { SecretsVault } from "./ports";

const TASK_ENDED = ["TaskCompleted", "TaskFailed", "TaskStopped"] as const;

/** Forgets a task's sensitiveData once the task has ended, and a session's once the session has. */
export function secretsCleanupReactor(vault: SecretsVault): Reactor<SessionEvent> {
  return {
    name: "sessions-secrets-cleanup",
    aggregateType: SESSION_AGGREGATE,
    canHandle: [...TASK_ENDED, ...SESSION_ENDED_EVENT_TYPES],
    async react(event) {
      switch (event.type) {
        case "TaskCompleted":
        case "TaskFailed":
        case "TaskStopped":
          return vault.forget(event.aggregateId, event.data.taskId);
        default:
          // The session ended.
          return vault.forget(event.aggregateId);
      }
    },
  };
}
