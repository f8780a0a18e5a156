import { NotFoundError } from "@bas/errors";
import type { SessionCommand } from "./commands";
import {
  completed,
  created,
  dispatched,
  newTask,
  PROJECT,
  sandboxReady,
  settings,
  spec,
  started,
} from "./decider-spec";
import type { SessionEvent } from "./events";
import { runChangeOf, shownRunStatus } from "./run-view";
import { EARLIER_TURNS } from "./state";

/** A v4 conversation whose run r1 is running. */
const runningRun = (): SessionEvent[] => [
  created({ keepAlive: true, api: "v4" }),
  dispatched("r1", { keepAlive: true }),
  sandboxReady,
  started("r1"),
];
const cancel = (taskId: string, projectId = PROJECT): SessionCommand => ({ type: "CancelTask", projectId, taskId });
const followUp = (taskId: string, api: "v3" | "v4"): SessionCommand => ({
  type: "DispatchTask",
  projectId: PROJECT,
  task: newTask(taskId, { keepAlive: true }),
  api,
});

describe("v4 conversations in the session aggregate", () => {
  test("cancel stops the run it names while it is current, and is a no-op once it is not", () => {
    expect(spec(runningRun()).when(cancel("r1"))).toEqual([
      { type: "TaskStopped", data: { taskId: "r1", reason: "user", summary: "Task cancelled by the user" } },
    ]);
    const ended = [...runningRun(), completed("r1")];
    expect(spec(ended).when(cancel("r1"))).toEqual([]);
    // A cancel of an earlier run never stops the one running now.
    const second = [...ended, dispatched("r2", { keepAlive: true }), started("r2")];
    expect(spec(second).when(cancel("r1"))).toEqual([]);
    expect(() => spec(runningRun()).when(cancel("r1", "project-b"))).toThrow(NotFoundError);
  });

  test("each API's sessions are not found through the other's commands", () => {
    const idleV4 = [...runningRun(), completed("r1")];
    expect(() => spec(idleV4).when(followUp("t2", "v3"))).toThrow(NotFoundError);
    expect(spec(idleV4).when(followUp("r2", "v4"))).toMatchObject([{ type: "TaskDispatched" }]);
    const stopV3: SessionCommand = { type: "StopSession", projectId: PROJECT, strategy: "session" };
    expect(() => spec(idleV4).when(stopV3)).toThrow(NotFoundError);
    const idleV3 = [created({ keepAlive: true }), dispatched("t1", { keepAlive: true }), sandboxReady, completed("t1")];
    expect(() => spec(idleV3).when(cancel("t1"))).toThrow(NotFoundError);
    expect(spec(idleV3).state).toMatchObject({ api: "v3" });
  });

  test("a follow-up sees the earlier turns: what was asked and how it ended, the last few, shortened", () => {
    const failed: SessionEvent = { type: "TaskFailed", data: { taskId: "r2", error: "site down" } };
    const history = [...runningRun(), completed("r1", { price: 3 }), dispatched("r2", { keepAlive: true }), failed];
    expect(spec(history).state).toMatchObject({
      turns: [
        { task: "do r1", outcome: '{"price":3}' },
        { task: "do r2", outcome: "Task failed: site down" },
      ],
    });
    const many: SessionEvent[] = [created({ keepAlive: true, api: "v4" }), sandboxReady];
    for (let i = 0; i < EARLIER_TURNS.max + 3; i++) {
      many.push(
        dispatched(`r${i}`, { keepAlive: true, task: "x".repeat(EARLIER_TURNS.chars + 50) }),
        completed(`r${i}`),
      );
    }
    const turns = (spec(many).state as { turns: { task: string }[] }).turns;
    expect(turns).toHaveLength(EARLIER_TURNS.max);
    expect(turns[0].task).toHaveLength(EARLIER_TURNS.chars);
    expect(turns[0].task.endsWith("...")).toBe(true);
  });
});

describe("a run's custom proxy", () => {
  const proxy = { host: "proxy.example", port: 8080, ignoreCertErrors: true };
  const idle = () => [...runningRun(), completed("r1")];
  const withProxy: SessionCommand = {
    type: "DispatchTask",
    projectId: PROJECT,
    task: newTask("r2", { keepAlive: true, customProxy: proxy }),
    api: "v4",
  };

  test("is the run's: recorded in its TaskDispatched and held on the current task", () => {
    expect(spec(idle()).when(withProxy)).toEqual([
      { type: "TaskDispatched", data: expect.objectContaining({ taskId: "r2", customProxy: proxy }) },
    ]);
    expect(spec(idle()).after(withProxy)).toMatchObject({ status: "running", task: { id: "r2", customProxy: proxy } });
    const create: SessionCommand = {
      type: "CreateSession",
      settings,
      options: { keepAlive: true, codeMode: false, outputSchema: null },
      idempotencyKey: null,
      task: newTask("r1", { keepAlive: true, customProxy: proxy }),
      preparationId: "prep-1",
      api: "v4",
    };
    expect(spec([]).after(create)).toMatchObject({ task: { id: "r1", customProxy: proxy } });
  });

  test("is not inherited: neither a follow-up run nor a queued message's run has one", () => {
    const proxied = [...idle(), dispatched("r2", { keepAlive: true, customProxy: proxy })];
    const next = spec([...proxied, completed("r2")]).after(followUp("r3", "v4"));
    expect(next).toMatchObject({ status: "running", task: { id: "r3" } });
    expect(next.status !== "none" && next.task).not.toHaveProperty("customProxy");
    const interrupt: SessionCommand = {
      type: "QueueMessage",
      projectId: PROJECT,
      text: "next",
      interrupt: true,
      dedupeKey: null,
    };
    const events = spec(proxied).when(interrupt);
    const drained = events.find((e) => e.type === "TaskDispatched");
    expect(drained).toMatchObject({ data: { task: "next" } });
    expect(drained?.data).not.toHaveProperty("customProxy");
  });
});

describe("a run's view", () => {
  test("statuses follow the task: queued until the browser is up, then dispatching, running and how it ended", () => {
    const dispatch = dispatched("r1");
    expect(runChangeOf(dispatch, null, false)).toMatchObject({ runId: "r1", status: "queued" });
    expect(runChangeOf(dispatch, null, true)).toMatchObject({ status: "dispatching" });
    expect(runChangeOf(sandboxReady, { id: "r1", status: "queued" }, false)).toMatchObject({
      runId: "r1",
      status: "dispatching",
      event: { type: "run.dispatching" },
    });
    // The browser of a conversation whose run is already past queued changes no run.
    expect(runChangeOf(sandboxReady, { id: "r1", status: "running" }, false)).toBeNull();
    expect(runChangeOf(completed("r1", { a: 1 }), null, true)).toMatchObject({
      status: "completed",
      result: '{"a":1}',
    });
    const capped: SessionEvent = { type: "TaskStopped", data: { taskId: "r1", reason: "cost_cap", summary: "cap" } };
    expect(runChangeOf(capped, null, true)).toMatchObject({ status: "failed", error: "cap" });
    const byUser: SessionEvent = { type: "TaskStopped", data: { taskId: "r1", reason: "user", summary: "bye" } };
    expect(runChangeOf(byUser, null, true)).toMatchObject({ status: "cancelled", event: { type: "run.cancelled" } });
    const hidden: SessionEvent = {
      type: "StepRecorded",
      data: {
        taskId: "r1",
        step: 1,
        summary: "s",
        screenshotRef: null,
        messages: [
          { id: "m1", role: "ai", type: "a", data: "shown", summary: null, hidden: false },
          { id: "m2", role: "ai", type: "b", data: "internal", summary: null, hidden: true },
        ],
      },
    };
    expect(runChangeOf(hidden, null, true)?.event?.data.messages).toEqual([
      { role: "ai", type: "a", data: "shown", summary: null },
    ]);
  });

  test("an ended run shows running until billing charged every token it reported, or the wait ran out", () => {
    const at = new Date("2026-01-01T00:00:00Z");
    const run = { status: "completed" as const, reportedTokens: 100, chargedTokens: 60, updatedAt: at };
    expect(shownRunStatus(run, new Date(at.getTime() + 1_000), 30_000)).toBe("running");
    expect(shownRunStatus({ ...run, chargedTokens: 100 }, at, 30_000)).toBe("completed");
    expect(shownRunStatus(run, new Date(at.getTime() + 30_000), 30_000)).toBe("completed");
    expect(shownRunStatus({ ...run, status: "running" }, at, 0)).toBe("running");
  });
});
