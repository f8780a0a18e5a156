import { IllegalStateError, InvalidArgumentError } from "@bas/service-kit";
import type { SessionCommand } from "./commands";
import { created, dispatched, idleKeepAlive, runningT1, sandboxReady, spec, started } from "./decider-spec";
import type { JsonValue, SessionEvent } from "./events";

const step = (n: number, ref: string | null = null): SessionCommand => ({
  type: "ReportStep",
  taskId: "t1",
  step: n,
  summary: `step ${n}`,
  screenshotRef: ref,
  messages: [{ role: "ai", type: "browser_action", data: `action ${n}`, summary: null, hidden: false }],
});

describe("steps", () => {
  test("a step counts once, moves the summary and the screenshot, and gives its messages fixed ids", () => {
    const events = spec(runningT1()).when(step(1, "blob/s1.png"));
    expect(events).toEqual([
      {
        type: "StepRecorded",
        data: expect.objectContaining({ step: 1, messages: [expect.objectContaining({ id: "id-1" })] }),
      },
    ]);
    const state = spec([...runningT1(), ...events]).state;
    expect(state).toMatchObject({ stepCount: 1, lastStepSummary: "step 1", screenshotRef: "blob/s1.png" });
    expect(spec([...runningT1(), ...events]).when(step(1))).toEqual([]);
  });

  test("stepCount keeps counting across the tasks of a session", () => {
    const history = [
      ...runningT1(true),
      ...spec(runningT1(true)).when(step(1)),
      { type: "TaskCompleted", data: { taskId: "t1", output: "a", success: true, summary: null } } as SessionEvent,
      dispatched("t2", { keepAlive: true }),
      started("t2"),
    ];
    const next = spec(history).after({ ...step(1), taskId: "t2" } as SessionCommand);
    expect(next).toMatchObject({ stepCount: 2 });
  });
});

describe("output by mode", () => {
  const complete = (output: JsonValue): SessionCommand => ({
    type: "ReportTaskCompleted",
    taskId: "t1",
    output,
    success: true,
    summary: null,
  });
  const running = (options: { codeMode?: boolean; outputSchema?: JsonValue }) => [
    created({ keepAlive: true }),
    dispatched("t1", { keepAlive: true, ...options }),
    sandboxReady,
    started("t1"),
  ];

  test("free text: a string (or null); an object is refused", () => {
    expect(spec(running({})).after(complete("the answer"))).toMatchObject({ output: "the answer" });
    expect(() => spec(running({})).when(complete({ a: 1 }))).toThrow(InvalidArgumentError);
  });

  test("outputSchema: the structured value is kept as is", () => {
    const schema = { type: "object", properties: { price: { type: "number" } } };
    expect(spec(running({ outputSchema: schema })).after(complete({ price: 19.99 }))).toMatchObject({
      output: { price: 19.99 },
    });
  });

  test("codeMode: {text, code, output?}; anything else is refused", () => {
    const good = { text: "summary", code: "print(1)", output: "1" };
    expect(spec(running({ codeMode: true })).after(complete(good))).toMatchObject({ output: good });
    for (const bad of ["just text", { text: "t" }, { text: "t", code: "c", extra: 1 }] as JsonValue[]) {
      expect(() => spec(running({ codeMode: true })).when(complete(bad))).toThrow(InvalidArgumentError);
    }
  });
});

describe("final reports", () => {
  test("a retried completion of the finished task is accepted and changes nothing", () => {
    const done = { type: "TaskCompleted", data: { taskId: "t1", output: "a", success: true, summary: null } };
    const history = [...runningT1(true), done as SessionEvent];
    expect(
      spec(history).when({ type: "ReportTaskCompleted", taskId: "t1", output: "a", success: true, summary: null }),
    ).toEqual([]);
  });

  test("a failed task: verdict false, the error as summary; without keepAlive the session stops", () => {
    const fail: SessionCommand = { type: "ReportTaskFailed", taskId: "t1", error: "site unreachable" };
    expect(spec(runningT1(true)).after(fail)).toMatchObject({
      status: "idle",
      isTaskSuccessful: false,
      lastStepSummary: "Task failed: site unreachable",
    });
    expect(spec(runningT1(false)).after(fail)).toMatchObject({ status: "stopped" });
  });

  test("a report naming another task is refused", () => {
    expect(() => spec(runningT1()).when({ type: "ReportTaskFailed", taskId: "t2", error: "e" })).toThrow(
      IllegalStateError,
    );
  });
});

describe("usage and recordings", () => {
  test("usage is the task's running total: the session sums its tasks, a repeat counts once", () => {
    const usage = (taskId: string, input: number, output: number): SessionCommand => ({
      type: "ReportUsage",
      taskId,
      inputTokens: input,
      outputTokens: output,
    });
    const afterFirst = [...runningT1(), ...spec(runningT1()).when(usage("t1", 100, 10))];
    expect(spec(afterFirst).when(usage("t1", 100, 10))).toEqual([]);
    expect(spec(afterFirst).after(usage("t1", 250, 30))).toMatchObject({
      totalInputTokens: 250,
      totalOutputTokens: 30,
    });
    expect(() => spec(afterFirst).when(usage("t-unknown", 1, 1))).toThrow(IllegalStateError);
  });

  test("usage arriving just after the task ended still counts", () => {
    const stopped = [
      ...runningT1(),
      { type: "TaskStopped", data: { taskId: "t1", reason: "user", summary: "s" } } as SessionEvent,
    ];
    expect(spec(stopped).after({ type: "ReportUsage", taskId: "t1", inputTokens: 5, outputTokens: 1 })).toMatchObject({
      totalInputTokens: 5,
    });
  });

  test("a recording is added once, also on an ended session", () => {
    const ended = [...idleKeepAlive(), { type: "SessionStopped", data: { reason: "user" } } as SessionEvent];
    const add: SessionCommand = { type: "ReportRecording", ref: "rec/1.webm" };
    expect(spec(ended).after(add)).toMatchObject({ recordingRefs: ["rec/1.webm"] });
    expect(spec([...ended, ...spec(ended).when(add)]).when(add)).toEqual([]);
  });
});
