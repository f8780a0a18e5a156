import { renderHistory, type StepRecord } from "./history";

const step = (n: number, extra: Partial<StepRecord> = {}): StepRecord => ({
  step: n,
  actions: [
    {
      call: `click {"index":${n}}`,
      summary: `Clicking ${n}`,
      result: `Clicked element ${n}. ${"detail ".repeat(20)}`,
      error: false,
    },
  ],
  url: `https://example.test/${n}`,
  ...extra,
});

test("recent steps are shown in full, older ones as one line", () => {
  const text = renderHistory(
    [1, 2, 3].map((n) => step(n)),
    { recentSteps: 1, maxChars: 10_000 },
  );
  expect(text.split("\n")[0]).toBe("Step 1: Clicking 1");
  expect(text.split("\n")[1]).toBe("Step 2: Clicking 2");
  expect(text).toContain('Step 3:\n  Action: click {"index":3}\n  Result: Clicked element 3.');
});

test("a long history stays within its budget, dropping the oldest lines first, and keeps extracted content longest", () => {
  const records = Array.from({ length: 200 }, (_, i) => step(i + 1));
  records[150] = step(151, {
    actions: [
      { call: "extract", summary: "Reading the page", result: "The cheapest is X at $3.", error: false, memory: true },
    ],
  });
  const text = renderHistory(records, { recentSteps: 5, maxChars: 4_000 });
  expect(text.length).toBeLessThanOrEqual(4_100);
  expect(text).toMatch(/^\[\d+ earlier steps omitted\]/);
  expect(text).toContain("Extracted: The cheapest is X at $3.");
  expect(text).toContain("Step 200:");
  expect(renderHistory([])).toBe("No steps yet.");
});
