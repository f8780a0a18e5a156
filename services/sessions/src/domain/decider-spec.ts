import type { EventEnvelope } from "@bas/event-store";
import type { NewTask, SessionCommand } from "./commands";
import { decide } from "./decide";
import type { JsonValue, SessionCreated, SessionEvent, SessionSettings } from "./events";
import { evolve, initialState, type SessionState } from "./state";

/** Given/when/then over the pure decider, for the unit tests beside it. Events are a minute apart. */
export const SESSION_ID = "00000000-0000-4000-8000-000000000001";
export const PROJECT = "project-a";
export const T0 = Date.parse("2025-01-01T00:00:00.000Z");

export function envelopes(events: SessionEvent[]): EventEnvelope<SessionEvent>[] {
  return events.map(
    (e, i) =>
      ({
        ...e,
        id: `event-${i}`,
        aggregateType: "session",
        aggregateId: SESSION_ID,
        occurredAt: new Date(T0 + i * 60_000).toISOString(),
      }) as EventEnvelope<SessionEvent>,
  );
}

export const given = (events: SessionEvent[]): SessionState => envelopes(events).reduce(evolve, initialState());

export function spec(history: SessionEvent[]) {
  const state = given(history);
  let ids = 0;
  const context = { now: new Date(T0 + history.length * 60_000), newId: () => `id-${++ids}` };
  return {
    state,
    when: (command: SessionCommand, now?: Date) => decide(command, state, now ? { ...context, now } : context),
    /** The state after the command's events, as the aggregate and the read model would both fold it. */
    after: (command: SessionCommand) => {
      const events = decide(command, state, context);
      return envelopes([...history, ...events]).reduce(evolve, initialState());
    },
  };
}

export const settings: SessionSettings = {
  projectId: PROJECT,
  model: "svc-max",
  thinkingLevel: null,
  useOwnKey: false,
  maxCostUsd: null,
  workspaceId: null,
  profileId: null,
  proxyCountryCode: "us",
  screenWidth: null,
  screenHeight: null,
  record: false,
  inbox: false,
  liveUrl: `http://localhost/live/${SESSION_ID}`,
};

export function newTask(taskId: string, overrides: Partial<NewTask> = {}): NewTask {
  return {
    taskId,
    task: `do ${taskId}`,
    sensitiveDataKeys: [],
    secretDomains: {},
    keepAlive: false,
    codeMode: false,
    outputSchema: null,
    maxCostUsd: null,
    ...overrides,
  };
}

export function created(overrides: Partial<SessionCreated["data"]> = {}): SessionCreated {
  return {
    type: "SessionCreated",
    data: {
      ...settings,
      keepAlive: false,
      codeMode: false,
      outputSchema: null,
      idempotencyKey: null,
      preparationId: null,
      ...overrides,
    },
  };
}

export function dispatched(taskId: string, overrides: Partial<NewTask> = {}): SessionEvent {
  return { type: "TaskDispatched", data: { ...newTask(taskId, overrides), messageId: `msg-${taskId}` } };
}

export const sandboxReady: SessionEvent = { type: "SandboxReady", data: { browserId: "browser-1" } };
export const started = (taskId: string): SessionEvent => ({
  type: "TaskStarted",
  data: { taskId, title: "A title", attempt: 1 },
});
export const completed = (taskId: string, output: JsonValue = "done"): SessionEvent => ({
  type: "TaskCompleted",
  data: { taskId, output, success: true, summary: null },
});

/** A keep-alive session created without a task, sandbox ready: idle. */
export const idleKeepAlive = (): SessionEvent[] => [
  created({ keepAlive: true, preparationId: "prep-1" }),
  sandboxReady,
];
/** A session created with task t1, sandbox ready, task started: running. */
export const runningT1 = (keepAlive = false): SessionEvent[] => [
  created({ keepAlive }),
  dispatched("t1", { keepAlive }),
  sandboxReady,
  started("t1"),
];
