import { IllegalStateError, LimitExceededError, NotFoundError } from "@bas/errors";
import type { SessionCommand } from "./commands";
import {
  completed,
  created,
  dispatched,
  envelopes,
  newTask,
  PROJECT,
  sandboxReady,
  spec,
  started,
} from "./decider-spec";
import type { SessionEvent } from "./events";
import { QUEUE_LIMITS } from "./queue";
import { evolve, initialState, type Session } from "./state";

/** A v4 conversation whose run r1 is running. */
const busy = (): SessionEvent[] => [
  created({ keepAlive: true, api: "v4" }),
  dispatched("r1", { keepAlive: true }),
  sandboxReady,
  started("r1"),
];
const idle = (): SessionEvent[] => [...busy(), completed("r1")];

const send = (text: string, options: { interrupt?: boolean; dedupeKey?: string } = {}): SessionCommand => ({
  type: "QueueMessage",
  projectId: PROJECT,
  text,
  interrupt: options.interrupt ?? false,
  dedupeKey: options.dedupeKey ?? null,
});
const take = (messageId: number): SessionCommand => ({ type: "CancelQueuedMessage", projectId: PROJECT, messageId });

/** Plays commands one after another, as the aggregate would, and returns every event and the end state. */
function play(history: SessionEvent[], ...commands: Array<SessionCommand | SessionEvent>) {
  const events = [...history];
  for (const c of commands) {
    if ("data" in c) events.push(c);
    else events.push(...spec(events).when(c));
  }
  return { events, state: envelopes(events).reduce(evolve, initialState()) as Session };
}
const queueOf = (s: Session) => s.queue!.messages.map((m) => [m.id, m.status, m.runId === null ? null : "run"]);
const dispatchedMessage = (e: SessionEvent) =>
  e.type === "TaskDispatched" ? { task: e.data.task, message: e.data.queuedMessageId } : undefined;

describe("the v4 session queue", () => {
  test("on an idle session a message becomes a run at once, in the same append", () => {
    const events = spec(idle()).when(send("next please"));
    expect(events.map((e) => e.type)).toEqual(["MessageQueued", "TaskDispatched"]);
    expect(dispatchedMessage(events[1])).toEqual({ task: "next please", message: 1 });
    const { state } = play(idle(), send("next please"));
    expect(state.status).toBe("running");
    expect(queueOf(state)).toEqual([[1, "dispatching", "run"]]);
  });

  test("on a busy session messages wait and run one per ended run, in order; the run's start consumes it", () => {
    let { events, state } = play(busy(), send("a"), send("b"));
    expect(queueOf(state)).toEqual([
      [1, "pending", null],
      [2, "pending", null],
    ]);
    const finished = spec(events).when({
      type: "ReportTaskCompleted",
      taskId: "r1",
      output: "ok",
      success: true,
      summary: null,
    });
    expect(finished.map(dispatchedMessage).filter(Boolean)).toEqual([{ task: "a", message: 1 }]);
    ({ events, state } = play(events, ...finished));
    const runA = state.task!.id;
    ({ state } = play(events, started(runA)));
    expect(queueOf(state)).toEqual([
      [1, "consumed", "run"],
      [2, "pending", null],
    ]);
  });

  test("interrupt cancels the active run and its message runs straight after, ahead of those waiting", () => {
    const { events, state } = play(busy(), send("later"), send("now!", { interrupt: true }));
    const last = events.slice(-3);
    expect(last.map((e) => e.type)).toEqual(["MessageQueued", "TaskStopped", "TaskDispatched"]);
    expect(last[1]).toMatchObject({ data: { taskId: "r1", reason: "interrupted" } });
    expect(dispatchedMessage(last[2])).toEqual({ task: "now!", message: 2 });
    expect(queueOf(state)).toEqual([
      [1, "pending", null],
      [2, "dispatching", "run"],
    ]);
    // r1's transcript ends where the interrupt was accepted.
    const stoppedAt = envelopes(events).at(-2)!.occurredAt;
    expect(state.queue!.steeringCutoffs).toEqual([{ sourceRunId: "r1", createdAt: stoppedAt }]);
    // An interrupt on an idle session just runs.
    expect(
      spec(idle())
        .when(send("go", { interrupt: true }))
        .map((e) => e.type),
    ).toEqual(["MessageQueued", "TaskDispatched"]);
  });

  test("a second interrupt before the first one's run started supersedes it", () => {
    const { state } = play(busy(), send("first", { interrupt: true }), send("second", { interrupt: true }));
    expect(queueOf(state)).toEqual([
      [1, "superseded", "run"],
      [2, "dispatching", "run"],
    ]);
    const firstRun = state.queue!.messages[0].runId;
    expect(state.queue!.steeringCutoffs!.map((c) => c.sourceRunId)).toEqual(["r1", firstRun]);
  });

  test("only interrupts cut runs short, and the session remembers the last cutoffs", () => {
    const cancelled = play(busy(), send("a"), { type: "CancelTask", projectId: PROJECT, taskId: "r1" }).state;
    expect(cancelled.queue!.steeringCutoffs).toBeUndefined();
    const stopped = play(busy(), send("a"), { type: "SessionStopped", data: { reason: "user" } }).state;
    expect(stopped.queue!.steeringCutoffs).toBeUndefined();

    const runs = Array.from({ length: QUEUE_LIMITS.steeringCutoffs + 3 }, (_, i) => `r${i + 2}`);
    const interrupted = runs.flatMap((run): SessionEvent[] => [
      dispatched(run, { keepAlive: true }),
      started(run),
      { type: "TaskStopped", data: { taskId: run, reason: "interrupted", summary: "interrupted" } },
    ]);
    const { state } = play(idle(), ...interrupted);
    const cutoffs = state.queue!.steeringCutoffs!.map((c) => c.sourceRunId);
    expect(cutoffs).toEqual(runs.slice(3));
  });

  test("a pending message can be taken back once; a dispatched one is a 409 that says why", () => {
    const { events, state } = play(busy(), send("a"), take(1));
    expect(queueOf(state)).toEqual([[1, "cancelled", null]]);
    expect(spec(events).when(take(1))).toEqual([]);
    expect(() => spec(events).when(take(7))).toThrow(NotFoundError);
    const running = play(idle(), send("b")).events;
    expect(() => spec(running).when(take(1))).toThrow(/Message 1 is dispatching \(run .+\); only a pending/);
    expect(() => spec(running).when(take(1))).toThrow(IllegalStateError);
  });

  test("a send with a dedupe key the session has seen queues nothing more", () => {
    const { events } = play(busy(), send("a", { dedupeKey: "k1" }));
    expect(spec(events).when(send("a", { dedupeKey: "k1" }))).toEqual([]);
    expect(spec(events).when(send("a", { dedupeKey: "k2" }))).toMatchObject([{ type: "MessageQueued" }]);
  });

  test("a full queue refuses more; an ended session fails what still waits and takes nothing more", () => {
    const full = play(busy(), ...Array.from({ length: QUEUE_LIMITS.pending }, (_, i) => send(`m${i}`))).events;
    expect(() => spec(full).when(send("one more"))).toThrow(LimitExceededError);
    const { events, state } = play(busy(), send("a"), { type: "SessionStopped", data: { reason: "user" } });
    expect(queueOf(state)).toEqual([[1, "failed", null]]);
    expect(() => spec(events).when(send("b"))).toThrow(/Session is stopped/);
  });

  test("only the caller's own v4 sessions take messages", () => {
    expect(() => spec(busy()).when({ ...send("a"), projectId: "project-b" } as SessionCommand)).toThrow(NotFoundError);
    const v3 = [created({ keepAlive: true }), dispatched("t1", { keepAlive: true }), sandboxReady];
    expect(() => spec(v3).when(send("a"))).toThrow(NotFoundError);
    expect(spec(v3).state).not.toHaveProperty("queue");
  });

  test("the session remembers the last ended messages only, and keeps counting ids", () => {
    const sends = Array.from({ length: QUEUE_LIMITS.kept + 5 }, (_, i) => [send(`m${i}`), take(i + 1)]).flat();
    const { state } = play(busy(), ...sends);
    expect(state.queue!.messages).toHaveLength(QUEUE_LIMITS.kept);
    expect(state.queue!.messages[0].id).toBe(6);
    expect(state.queue!.nextId).toBe(QUEUE_LIMITS.kept + 6);
  });
});

describe("a v4 conversation that timed out", () => {
  const timedOut = (): SessionEvent[] => [...idle(), { type: "SessionTimedOut", data: { inactiveSince: "x" } }];

  test("reopens for a follow-up run: set up again with a new browser, the run waiting for it", () => {
    const followUp: SessionCommand = {
      type: "DispatchTask",
      projectId: PROJECT,
      api: "v4",
      task: newTask("r2", { keepAlive: true }),
    };
    const events = spec(timedOut()).when(followUp);
    expect(events.map((e) => e.type)).toEqual(["SessionReopened", "TaskDispatched"]);
    const { state } = play(timedOut(), followUp);
    expect(state).toMatchObject({ status: "created", browserId: null, reopened: true, task: { id: "r2" } });
    // Its new browser: running from there, and no longer "reopened".
    const ready = play(timedOut(), followUp, { type: "SandboxReady", data: { browserId: "browser-2" } }).state;
    expect(ready).toMatchObject({ status: "running", browserId: "browser-2", reopened: false });
  });

  test("reopens for a queued message, which runs at once", () => {
    expect(
      spec(timedOut())
        .when(send("back again"))
        .map((e) => e.type),
    ).toEqual(["SessionReopened", "MessageQueued", "TaskDispatched"]);
  });

  test("a v3 session that timed out, and a conversation the caller stopped, stay ended", () => {
    const v3: SessionEvent[] = [
      created({ keepAlive: true }),
      dispatched("t1", { keepAlive: true }),
      sandboxReady,
      completed("t1"),
      { type: "SessionTimedOut", data: { inactiveSince: "x" } },
    ];
    const followUp: SessionCommand = {
      type: "DispatchTask",
      projectId: PROJECT,
      api: "v3",
      task: newTask("t2", { keepAlive: true }),
    };
    expect(() => spec(v3).when(followUp)).toThrow(/Session is timed_out/);
    const stopped: SessionEvent[] = [...idle(), { type: "SessionStopped", data: { reason: "user" } }];
    expect(() => spec(stopped).when(send("x"))).toThrow(/Session is stopped/);
  });
});
