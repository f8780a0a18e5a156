import { IllegalStateError, NotFoundError } from "@bas/errors";
import type { SessionCommand } from "./commands";
import {
  completed,
  created,
  dispatched,
  idleKeepAlive,
  newTask,
  PROJECT,
  runningT1,
  settings,
  spec,
  started,
  T0,
} from "./decider-spec";
import type { SessionEvent } from "./events";

const types = (events: SessionEvent[]) => events.map((e) => e.type);
const create = (task: ReturnType<typeof newTask> | null, idempotencyKey: string | null = null): SessionCommand => ({
  type: "CreateSession",
  settings,
  options: { keepAlive: false, codeMode: false, outputSchema: null },
  idempotencyKey,
  task,
  preparationId: "prep-1",
  api: "v3",
});
const dispatch = (taskId: string, projectId = PROJECT): SessionCommand => ({
  type: "DispatchTask",
  projectId,
  task: newTask(taskId, { keepAlive: true }),
  api: "v3",
});

describe("creating", () => {
  test("with a task: created, the task dispatched and waiting for the sandbox, no verdict yet", () => {
    const { when, after } = spec([]);
    expect(types(when(create(newTask("t1"))))).toEqual(["SessionCreated", "TaskDispatched"]);
    const state = after(create(newTask("t1")));
    expect(state).toMatchObject({ status: "created", task: { id: "t1" }, isTaskSuccessful: null, title: null });
  });

  test("without a task: created with a preparation id and no task", () => {
    const events = spec([]).when(create(null));
    expect(events).toEqual([expect.objectContaining({ type: "SessionCreated" })]);
    expect(events[0].data).toMatchObject({ preparationId: "prep-1" });
  });

  test("a retried create with the same idempotency key changes nothing; an id clash is refused", () => {
    const history = [created({ idempotencyKey: "k1" })];
    expect(spec(history).when(create(newTask("t1"), "k1"))).toEqual([]);
    expect(() => spec(history).when(create(newTask("t1"), "other"))).toThrow(IllegalStateError);
  });
});

describe("created → idle / running when the sandbox is ready", () => {
  test("no task waiting: idle keep-alive session", () => {
    expect(spec([created({ preparationId: "p" })]).after({ type: "ReportSandboxReady", browserId: "b" })).toMatchObject(
      {
        status: "idle",
        browserId: "b",
      },
    );
  });

  test("a task already waiting: straight to running, never an idle a poller would read as finished", () => {
    const state = spec([created(), dispatched("t1")]).after({ type: "ReportSandboxReady", browserId: "b" });
    expect(state).toMatchObject({ status: "running", task: { id: "t1" }, isTaskSuccessful: null });
  });

  test("a second ready report is a no-op; a ready report on an ended session is refused", () => {
    expect(spec(idleKeepAlive()).when({ type: "ReportSandboxReady", browserId: "b" })).toEqual([]);
    const stopped = [...idleKeepAlive(), { type: "SessionStopped", data: { reason: "user" } } as SessionEvent];
    expect(() => spec(stopped).when({ type: "ReportSandboxReady", browserId: "b" })).toThrow(IllegalStateError);
  });
});

describe("idle → running → idle", () => {
  test("dispatching to an idle session runs it; the previous task's verdict and output are cleared", () => {
    const history = [...idleKeepAlive(), dispatched("t0", { keepAlive: true }), started("t0"), completed("t0", "x")];
    const state = spec(history).after(dispatch("t1"));
    expect(state).toMatchObject({
      status: "running",
      task: { id: "t1", started: false },
      title: null,
      output: null,
      isTaskSuccessful: null,
    });
  });

  test("the title appears once the task starts; without one from the runner it is the task's first line", () => {
    const history = [...idleKeepAlive(), dispatched("t1", { task: "Find the price\nof the blue shoes" })];
    expect(
      spec(history).after({ type: "ReportTaskStarted", taskId: "t1", title: "Price check", attempt: 1 }),
    ).toMatchObject({ status: "running", title: "Price check" });
    expect(spec(history).after({ type: "ReportTaskStarted", taskId: "t1", title: null, attempt: 1 })).toMatchObject({
      title: "Find the price",
    });
  });

  test("task completes with keepAlive: idle, output and verdict kept, ready for another task", () => {
    const complete: SessionCommand = {
      type: "ReportTaskCompleted",
      taskId: "t1",
      output: "42",
      success: true,
      summary: "Found it",
    };
    const state = spec(runningT1(true)).after(complete);
    expect(state).toMatchObject({ status: "idle", output: "42", isTaskSuccessful: true, lastStepSummary: "Found it" });
    const afterwards = [...runningT1(true), ...spec(runningT1(true)).when(complete)];
    expect(types(spec(afterwards).when(dispatch("t2")))).toEqual(["TaskDispatched"]);
  });

  test("task completes without keepAlive: stopped automatically", () => {
    const command: SessionCommand = {
      type: "ReportTaskCompleted",
      taskId: "t1",
      output: "ok",
      success: false,
      summary: null,
    };
    expect(types(spec(runningT1(false)).when(command))).toEqual(["TaskCompleted", "SessionStopped"]);
    expect(spec(runningT1(false)).after(command)).toMatchObject({ status: "stopped", isTaskSuccessful: false });
  });

  test("a dispatch to a session that is not idle is refused (409), to another project's session not found", () => {
    for (const history of [runningT1(), [created(), dispatched("t1")], [created({ preparationId: "p" })]]) {
      expect(() => spec(history).when(dispatch("t9"))).toThrow(IllegalStateError);
    }
    expect(() => spec(idleKeepAlive()).when(dispatch("t9", "project-b"))).toThrow(NotFoundError);
    expect(() => spec([]).when(dispatch("t9"))).toThrow(NotFoundError);
  });

  test("a follow-up keeps an existing keep-alive; it can turn keep-alive on, never off", () => {
    const followUp = (keepAlive: boolean): SessionCommand => ({
      type: "DispatchTask",
      projectId: PROJECT,
      task: newTask("t9", { keepAlive }),
      api: "v3",
    });
    expect(spec(idleKeepAlive()).after(followUp(false))).toMatchObject({ keepAlive: true });
    const stoppedTask = [
      ...runningT1(false),
      { type: "TaskStopped", data: { taskId: "t1", reason: "user", summary: "s" } } as SessionEvent,
    ];
    expect(spec(stoppedTask).after(followUp(false))).toMatchObject({ keepAlive: false });
    expect(spec(stoppedTask).after(followUp(true))).toMatchObject({ keepAlive: true });
  });

  test("a retried dispatch of the same task id changes nothing", () => {
    expect(spec([...idleKeepAlive(), dispatched("t1")]).when(dispatch("t1"))).toEqual([]);
  });
});

describe("stop", () => {
  test("strategy task: the task ends at once, the session stays idle, the verdict is false", () => {
    const state = spec(runningT1(false)).after({ type: "StopSession", projectId: PROJECT, strategy: "task" });
    expect(state).toMatchObject({ status: "idle", task: null, isTaskSuccessful: false });
    expect(state.status !== "none" && state.lastStepSummary).toMatch(/stopped/i);
  });

  test("strategy task: later reports of the old task are refused so the stale runner stops", () => {
    const history = [
      ...runningT1(true),
      { type: "TaskStopped", data: { taskId: "t1", reason: "user", summary: "stopped" } } as SessionEvent,
    ];
    const stale: SessionCommand[] = [
      {
        type: "ReportStep",
        taskId: "t1",
        step: 1,
        summary: "s",
        screenshotRef: null,
        messages: [],
        attempt: 1,
        agentRecord: null,
      },
      { type: "ReportTaskCompleted", taskId: "t1", output: "x", success: true, summary: null },
      { type: "ReportTaskFailed", taskId: "t1", error: "e" },
      { type: "ReportTaskStarted", taskId: "t1", title: null, attempt: 2 },
    ];
    for (const command of stale) expect(() => spec(history).when(command)).toThrow(IllegalStateError);
  });

  test("strategy session: from running, idle and created, the session ends stopped", () => {
    const stop: SessionCommand = { type: "StopSession", projectId: PROJECT, strategy: "session" };
    expect(types(spec(runningT1()).when(stop))).toEqual(["TaskStopped", "SessionStopped"]);
    for (const history of [runningT1(), idleKeepAlive(), [created(), dispatched("t1")], [created()]]) {
      expect(spec(history).after(stop)).toMatchObject({ status: "stopped", task: null });
    }
  });

  test("stopping an ended session is a no-op", () => {
    const stopped = [...idleKeepAlive(), { type: "SessionStopped", data: { reason: "user" } } as SessionEvent];
    expect(spec(stopped).when({ type: "StopSession", projectId: PROJECT, strategy: "session" })).toEqual([]);
    expect(spec(stopped).when({ type: "StopSession", projectId: PROJECT, strategy: "task" })).toEqual([]);
  });
});

describe("timeout, failure, terminal states", () => {
  const timeout = (ms: number): SessionCommand => ({ type: "TimeOut", timeoutMs: ms });

  test("an idle session without activity for the timeout is timed out; a younger one is not", () => {
    const { when, state } = spec(idleKeepAlive());
    const lastChange = state.status !== "none" ? Date.parse(state.updatedAt) : 0;
    expect(types(when(timeout(60_000), new Date(lastChange + 60_000)))).toEqual(["SessionTimedOut"]);
    expect(when(timeout(60_000), new Date(lastChange + 59_999))).toEqual([]);
  });

  test("a session stuck in created times out, its waiting task ends; a running one never does", () => {
    const stuck = spec([created(), dispatched("t1")]);
    const events = stuck.when(timeout(1), new Date(T0 + 3_600_000));
    expect(types(events)).toEqual(["TaskStopped", "SessionTimedOut"]);
    expect(spec(runningT1()).when(timeout(1), new Date(T0 + 3_600_000))).toEqual([]);
  });

  test("a sandbox failure from created, idle or running ends in error, failing the task in progress", () => {
    const fail: SessionCommand = { type: "ReportSandboxFailed", error: "chromium crashed" };
    expect(types(spec(runningT1()).when(fail))).toEqual(["TaskFailed", "SandboxFailed"]);
    for (const history of [[created()], idleKeepAlive()]) {
      // The reason is the session's summary, whatever summary it had before.
      expect(spec(history).after(fail)).toMatchObject({
        status: "error",
        task: null,
        lastStepSummary: "chromium crashed",
      });
    }
    expect(spec(runningT1()).after(fail)).toMatchObject({
      status: "error",
      task: null,
      isTaskSuccessful: false,
      lastStepSummary: "Task failed: chromium crashed",
    });
  });

  test("terminal sessions accept no task", () => {
    const endings: SessionEvent[] = [
      { type: "SessionStopped", data: { reason: "user" } },
      { type: "SessionTimedOut", data: { inactiveSince: "x" } },
      { type: "SandboxFailed", data: { error: "x" } },
    ];
    for (const end of endings) {
      expect(() => spec([...idleKeepAlive(), end]).when(dispatch("t9"))).toThrow(IllegalStateError);
    }
  });

  test("delete stops a running session first, then the session is gone for its project", () => {
    const del: SessionCommand = { type: "DeleteSession", projectId: PROJECT };
    expect(types(spec(runningT1()).when(del))).toEqual(["TaskStopped", "SessionStopped", "SessionDeleted"]);
    const gone = [...runningT1(), ...spec(runningT1()).when(del)];
    expect(() => spec(gone).when(del)).toThrow(NotFoundError);
    expect(() => spec(gone).when({ type: "StopSession", projectId: PROJECT, strategy: "session" })).toThrow(
      NotFoundError,
    );
    expect(() => spec(gone).when({ type: "ReportSandboxReady", browserId: "b" })).toThrow(IllegalStateError);
  });

  test("the cost cap stops the running task: idle with keepAlive, stopped without", () => {
    const budget: SessionCommand = { type: "StopForBudget", capUsd: "0.50", taskId: null };
    const kept = spec(runningT1(true)).after(budget);
    expect(kept).toMatchObject({ status: "idle", isTaskSuccessful: false });
    expect(kept.status !== "none" && kept.lastStepSummary).toMatch(/cost cap of 0\.50 USD/);
    expect(spec(runningT1(false)).after(budget)).toMatchObject({ status: "stopped", isTaskSuccessful: false });
    expect(spec(idleKeepAlive()).when(budget)).toEqual([]);
    expect(spec(runningT1(true)).when({ ...budget, taskId: "t1" })).toHaveLength(1);
    expect(spec(runningT1(true)).when({ ...budget, taskId: "an-earlier-task" })).toEqual([]);
  });
});
