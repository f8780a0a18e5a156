import { IllegalStateError, InvalidArgumentError, SupersededError } from "@bas/errors";
import type { SessionCommand } from "./commands";
import { created, dispatched, envelopes, idleKeepAlive, runningT1, sandboxReady, spec, started } from "./decider-spec";
import type { JsonValue, SessionEvent } from "./events";
import { taskProgress } from "./task-progress";

const step = (n: number, ref: string | null = null, attempt = 1): SessionCommand => ({
  type: "ReportStep",
  taskId: "t1",
  step: n,
  summary: `step ${n}`,
  screenshotRef: ref,
  messages: [{ role: "ai", type: "browser_action", data: `action ${n}`, summary: null, hidden: false }],
  attempt,
  agentRecord: `{"step":${n}}`,
});
const attempt = (n: number): SessionEvent => ({
  type: "TaskStarted",
  data: { taskId: "t1", title: "A title", attempt: n },
});
/** The history, then in order: each event as is, and the events each command decides. */
function play(history: SessionEvent[], ...items: Array<SessionCommand | SessionEvent>): SessionEvent[] {
  let events = history;
  for (const item of items) events = [...events, ...("data" in item ? [item] : spec(events).when(item))];
  return events;
}

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

  test("a new attempt continues the task's steps: stepCount counts steps taken, and the old attempt is refused", () => {
    const history = play(runningT1(), step(1), step(2), step(3, null, 1));
    const resumed = [...history, attempt(2)];
    expect(spec(resumed).state).toMatchObject({ stepCount: 3, task: { attempt: 2, lastStep: 3 } });
    // The runner of attempt 1 is still around: its next step must not land (it would act twice).
    expect(() => spec(resumed).when(step(4, null, 1))).toThrow(SupersededError);
    const after = play(resumed, step(3, null, 2), step(4, null, 2), step(4, null, 2));
    expect(spec(after).state).toMatchObject({ stepCount: 4, lastStepSummary: "step 4" });
    expect(taskProgress(envelopes(after), "t1")).toMatchObject({
      attempt: 2,
      lastStep: 4,
      steps: [1, 2, 3, 4].map((n) => ({ step: n, agentRecord: `{"step":${n}}` })),
    });
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
  test("a run's judgement is kept when the run was to be judged, and dropped when it was not", () => {
    const judgement = { verdict: true, reasoning: "The page shows it." };
    const report: SessionCommand = {
      type: "ReportTaskCompleted",
      taskId: "t1",
      output: "a",
      success: true,
      summary: null,
      judgement,
    };
    const judged = [created({ keepAlive: true }), dispatched("t1", { keepAlive: true, judge: {} }), sandboxReady];
    expect(spec([...judged, started("t1")]).when(report)).toEqual([
      { type: "TaskCompleted", data: { taskId: "t1", output: "a", success: true, summary: null, judgement } },
    ]);
    expect(spec(runningT1(true)).when(report)).toEqual([
      { type: "TaskCompleted", data: { taskId: "t1", output: "a", success: true, summary: null } },
    ]);
  });

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
  const call = (attemptNo: number, n: number, input: number, output = 1): SessionCommand => ({
    type: "ReportUsage",
    taskId: "t1",
    inputTokens: input,
    outputTokens: output,
    call: { usageId: `u-${attemptNo}-${n}`, attempt: attemptNo, number: n },
  });

  test("each model call adds to the totals once, across attempts: the same calls billing charges", () => {
    const history = play(runningT1(), call(1, 1, 100), call(1, 2, 200), call(1, 2, 200), attempt(2), call(2, 1, 50));
    expect(spec(history).state).toMatchObject({ totalInputTokens: 350, totalOutputTokens: 3 });
    // A late report of the old attempt's call is a fact too.
    const late = play(history, call(1, 3, 7), call(1, 3, 7));
    expect(spec(late).state).toMatchObject({ totalInputTokens: 357, totalOutputTokens: 4 });
    expect(taskProgress(envelopes(late), "t1")).toMatchObject({
      inputTokens: 357,
      outputTokens: 4,
      lastUsage: { usageId: "u-1-3", inputTokens: 7, outputTokens: 1 },
    });
  });

  test("an older runner's usage is the task's running total: the session sums its tasks, a repeat counts once", () => {
    const usage = (taskId: string, input: number, output: number): SessionCommand => ({
      type: "ReportUsage",
      taskId,
      inputTokens: input,
      outputTokens: output,
      call: null,
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
    expect(spec(stopped).after(call(1, 1, 5))).toMatchObject({ totalInputTokens: 5 });
  });

  test("a recording is added once, also on an ended session", () => {
    const ended = [...idleKeepAlive(), { type: "SessionStopped", data: { reason: "user" } } as SessionEvent];
    const add: SessionCommand = { type: "ReportRecording", ref: "rec/1.webm" };
    expect(spec(ended).after(add)).toMatchObject({ recordingRefs: ["rec/1.webm"] });
    expect(spec([...ended, ...spec(ended).when(add)]).when(add)).toEqual([]);
  });
});
