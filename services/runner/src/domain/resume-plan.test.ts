import type { StepRecord } from "./history";
import { FRESH_START, NEW_BROWSER_NOTE, planResume } from "./resume-plan";
import { decodeMemory, encodeMemory, type PendingStep, type StepMemory, UNKNOWN_OUTCOME } from "./step-memory";

const record = (n: number, call = `click {"index":${n}}`): StepRecord => ({
  step: n,
  actions: [{ call, summary: `Clicking ${n}`, result: `Clicked element ${n}.`, error: false }],
});
const memory = (n: number, extra: Partial<StepMemory> = {}): string =>
  encodeMemory({ record: record(n), trace: [], browserId: "browser-a", ...extra });
const pending = (n: number, browserId = "browser-a"): PendingStep => ({
  step: n,
  browserId,
  summary: "Clicking 'Press'",
  messages: [{ role: "ai", type: "browser_action", data: '{"action":"click","index":4}', hidden: false }],
  record: {
    step: n,
    thought: "Press it",
    actions: [{ call: 'click {"index":4}', summary: "Clicking 'Press'", result: "(not done yet)", error: false }],
  },
});

test("a first attempt starts fresh", () => {
  expect(planResume({ attempt: 1, lastStep: 0, agentRecords: [], browserId: "browser-a" })).toEqual({
    start: FRESH_START,
  });
});

test("a later attempt in the same browser continues after the last recorded step, with every step's memory", () => {
  const plan = planResume({ attempt: 2, lastStep: 2, agentRecords: [memory(1), memory(2)], browserId: "browser-a" });
  expect(plan.interrupted).toBeUndefined();
  expect(plan.start.nextStep).toBe(3);
  expect(plan.start.memories.map((m) => m.record.step)).toEqual([1, 2]);
  expect(plan.start.notes).toEqual([]);
  expect(plan.start.notices).toEqual([
    expect.objectContaining({ type: "task_resumed", hidden: true, data: expect.stringMatching(/same browser/) }),
  ]);
});

test("in a new browser the model is told its pages are gone, and the session shows it", () => {
  const plan = planResume({ attempt: 3, lastStep: 2, agentRecords: [memory(1), memory(2)], browserId: "browser-b" });
  expect(plan.start.notes).toEqual([NEW_BROWSER_NOTE]);
  expect(plan.start.notices).toEqual([
    expect.objectContaining({ type: "task_resumed", hidden: false, data: expect.stringMatching(/new browser/) }),
  ]);
});

test("the step the last attempt was acting on is recorded with an unknown outcome, never taken again", () => {
  const plan = planResume({
    attempt: 2,
    lastStep: 1,
    agentRecords: [memory(1)],
    pending: pending(2),
    browserId: "browser-a",
  });
  expect(plan.interrupted).toMatchObject({ step: 2, summary: "Clicking 'Press'" });
  expect(plan.interrupted?.messages.at(-1)).toMatchObject({ type: "browser_action_error", data: UNKNOWN_OUTCOME });
  expect(plan.interrupted?.memory.record.actions).toEqual([
    expect.objectContaining({ call: 'click {"index":4}', result: UNKNOWN_OUTCOME, error: true }),
  ]);
  expect(plan.start.nextStep).toBe(3);
  expect(plan.start.memories.map((m) => m.record.step)).toEqual([1, 2]);
  // A pending step that was recorded after all is no news.
  expect(
    planResume({ attempt: 2, lastStep: 2, agentRecords: [memory(1), memory(2)], pending: pending(2), browserId: "a" })
      .interrupted,
  ).toBeUndefined();
});

test("a refused answer is still corrected after a restart; a damaged record is skipped", () => {
  const plan = planResume({
    attempt: 2,
    lastStep: 2,
    agentRecords: [memory(1), "{not json", memory(2, { correction: "Match the schema." })],
    browserId: "browser-a",
  });
  expect(plan.start.memories.map((m) => m.record.step)).toEqual([1, 2]);
  expect(plan.start.notes).toEqual(["Match the schema."]);
});

test("a memory keeps what the history shows, not more", () => {
  const long = encodeMemory({
    record: { step: 1, actions: [{ call: "extract", summary: "s", result: "x".repeat(50_000), error: false }] },
    trace: [],
    browserId: "b",
  });
  expect(long.length).toBeLessThan(5_000);
  expect(decodeMemory(long)?.record.actions[0].result).toHaveLength(4_000);
});
