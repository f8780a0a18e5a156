import type { Projection } from "@bas/event-store";
import { SESSION_AGGREGATE, type SessionEvent } from "../domain/events";
import type { SecretsVault } from "./ports";

/** Forgets a task's sensitiveData once the task has ended, and a session's once the session has. */
export function secretsCleanupReactor(vault: SecretsVault): Projection<any, SessionEvent> {
  return {
    name: "sessions-secrets-cleanup",
    aggregateType: SESSION_AGGREGATE,
    setup: async () => {},
    teardown: async () => {},
    async apply(_trx, event) {
      switch (event.type) {
        case "TaskCompleted":
        case "TaskFailed":
        case "TaskStopped":
          return vault.forget(event.aggregateId, event.data.taskId);
        case "SessionStopped":
        case "SessionTimedOut":
        case "SandboxFailed":
        case "SessionDeleted":
          return vault.forget(event.aggregateId);
      }
    },
  };
}
