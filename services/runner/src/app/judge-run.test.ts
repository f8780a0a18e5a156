import { judgeRun } from "./judge-run";
import { BudgetExceededError, type ChatRequest, type ChatResult, type ModelCaller } from "./ports";

const input = { task: "t", records: [], lastPage: "", success: true, output: "a", summary: "a" };
const verdict = {
  verdict: true,
  reasoning: "shown",
  failureReason: null,
  impossibleTask: false,
  reachedCaptcha: false,
};
const reply = (content: string): ChatResult => ({ content, toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } });

/** A model that answers from a list and keeps what it was asked. */
function model(answers: (ChatResult | Error)[]): ModelCaller & { asked: ChatRequest[] } {
  const asked: ChatRequest[] = [];
  return {
    asked,
    async call(request) {
      asked.push(request);
      const next = answers.shift()!;
      if (next instanceof Error) throw next;
      return next;
    },
  };
}

test("an unreadable answer gets one more try, told what was wrong", async () => {
  const m = model([reply("fine"), reply(JSON.stringify(verdict))]);
  expect(await judgeRun(m, input, new AbortController().signal)).toEqual(verdict);
  expect(m.asked[1].messages.at(-1)?.content).toMatch(/could not be used \(the judge's answer was not JSON\)/);
});

test("no verdict, with the reason, when the answer stays unreadable or the budget is spent", async () => {
  const signal = new AbortController().signal;
  expect(await judgeRun(model([reply("no"), reply("still no")]), input, signal)).toEqual({
    verdict: null,
    error: "Not judged: the judge's answer was not JSON",
  });
  const spent = new BudgetExceededError("Task stopped: the cost cap of 0.01 USD was reached", "cost_cap");
  expect(await judgeRun(model([spent]), input, signal)).toEqual({
    verdict: null,
    error: "Not judged: Task stopped: the cost cap of 0.01 USD was reached",
  });
});

test("a stopped run is not judged: the abort goes through", async () => {
  const stop = new AbortController();
  stop.abort();
  await expect(judgeRun(model([new Error("aborted")]), input, stop.signal)).rejects.toThrow("aborted");
});
