import type { Reactor, StoredEvent } from "@bas/event-store";
import type { runner } from "@bas/proto";
import { SESSION_AGGREGATE, type SessionEvent } from "../domain/events";
import { isTerminal, type Session, type SessionState } from "../domain/state";

export interface DispatchReactorDeps {
  load(sessionId: string): Promise<SessionState>;
  publish(assignment: runner.TaskAssignment, traceparent?: string): Promise<void>;
}

function assignment(session: Session, taskId: string, task: Session["task"]): runner.TaskAssignment {
  const s = session.settings;
  return {
    taskId,
    sessionId: session.id,
    projectId: s.projectId,
    task: task?.task ?? "",
    model: s.model,
    thinkingLevel: s.thinkingLevel ?? undefined,
    outputSchema: session.outputSchema ?? undefined,
    codeMode: session.codeMode,
    keepAlive: session.keepAlive,
    useOwnKey: s.useOwnKey,
    browser: {
      proxyCountryCode: s.proxyCountryCode ?? undefined,
      profileId: s.profileId ?? undefined,
      screenWidth: s.screenWidth ?? undefined,
      screenHeight: s.screenHeight ?? undefined,
      record: s.record,
      // Sessions created before allowedDomains existed have no limit.
      allowedDomains: s.allowedDomains ?? [],
      // The run's own proxy, never its credentials: the runner fetches those with the task's secrets.
      ...(task?.customProxy ? { customProxy: { ...task.customProxy } } : {}),
    },
    maxCostUsd: task?.maxCostUsd ?? s.maxCostUsd ?? undefined,
    sensitiveDataKeys: task?.sensitiveDataKeys ?? [],
    secretDomains: task?.secretDomains ?? {},
    ...(task?.judge ? { judge: task.judge } : {}),
    ...(task?.modelParams ? { modelParams: task.modelParams } : {}),
    earlierTurns: task ? (session.turns ?? []) : [],
    // A v4 run counts its usage and its cap on a ledger of its own.
    ...(session.api === "v4" && task ? { runId: taskId } : {}),
    ...(session.reopened ? { reopened: true } : {}),
    ...(s.workspaceId ? { workspaceId: s.workspaceId } : {}),
    // The agent gets mail tools for the session's temporary mailbox.
    ...(s.inboxEmail ? { inboxEmail: s.inboxEmail } : {}),
    attachedFiles: task?.attachedFiles?.map((f) => f.path) ?? [],
  };
}

/**
 * What to put on the work queue for an event, judged on the session as it is now: the task if it is still the
 * current one; a sandbox-only assignment (empty task) while the session still needs its sandbox; else nothing.
 */
export function assignmentFor(state: SessionState, event: StoredEvent<SessionEvent>): runner.TaskAssignment | null {
  if (state.status === "none" || state.deleted || isTerminal(state)) return null;
  if (event.type === "SessionCreated") {
    const id = event.data.preparationId;
    return id && state.status === "created" ? assignment(state, id, null) : null;
  }
  if (event.type !== "TaskDispatched") return null;
  const taskId = event.data.taskId;
  if (state.task?.id === taskId) return assignment(state, taskId, state.task);
  return state.status === "created" ? assignment(state, taskId, null) : null;
}

/**
 * Turns dispatched tasks (and task-less creations) into TaskAssignments on the work queue. Runs on the projection
 * runner for its durable consumer and checkpoint; a redelivered event publishes again with the same message id
 * (the task id), which JetStream drops as a duplicate.
 */
export function dispatchReactor(deps: DispatchReactorDeps): Reactor<SessionEvent> {
  return {
    name: "sessions-dispatch",
    aggregateType: SESSION_AGGREGATE,
    canHandle: ["SessionCreated", "TaskDispatched"],
    async react(event) {
      const next = assignmentFor(await deps.load(event.aggregateId), event);
      if (next) await deps.publish(next, event.traceparent);
    },
  };
}
