import { judgeMessages, readJudgement } from "./judge";

const input = {
  task: "What does the Pixelon 8 cost?",
  context: "The price must be the one on the product page.",
  records: [
    {
      step: 1,
      actions: [
        { call: 'go_to_url {"url":"https://shop.test/p/8"}', summary: "opened", result: "Opened", error: false },
      ],
      url: "https://shop.test/p/8",
    },
  ],
  lastPage: "Pixelon 8 — $699.00",
  success: true,
  output: "It costs $599.00.",
  summary: "It costs $599.00.",
};

test("the judge reads the task, the caller's context, the steps, the last page and the answer", () => {
  const [system, user] = judgeMessages(input);
  expect(system.content).toMatch(/judgement/);
  const text = user.content as string;
  for (const part of [input.task, input.context, "go_to_url", "$699.00", "It costs $599.00.", "succeeded"]) {
    expect(text).toContain(part);
  }
  expect(judgeMessages({ ...input, context: undefined })[1].content).not.toContain("What the user says");
});

const verdict = {
  verdict: false,
  reasoning: "The page shows $699.00.",
  failureReason: "The answer contradicts the page.",
  impossibleTask: false,
  reachedCaptcha: false,
};

test("the verdict comes from the judgement tool call, or from plain JSON (fenced too)", () => {
  const call = { name: "judgement", arguments: JSON.stringify(verdict) };
  expect(readJudgement({ content: null, toolCalls: [call] })).toEqual({ judgement: verdict });
  const fenced = `\`\`\`json\n${JSON.stringify(verdict)}\n\`\`\``;
  expect(readJudgement({ content: fenced, toolCalls: [] })).toEqual({ judgement: verdict });
  // A pass has no failure reason, whatever the model wrote there.
  const pass = { ...verdict, verdict: true, failureReason: "none" };
  expect(readJudgement({ content: JSON.stringify(pass), toolCalls: [] })).toEqual({
    judgement: { ...pass, failureReason: null },
  });
});

test("an answer that is not a verdict is a problem in words, never a verdict", () => {
  expect(readJudgement({ content: "Looks fine to me.", toolCalls: [] })).toEqual({
    problem: "the judge's answer was not JSON",
  });
  const partial = readJudgement({ content: JSON.stringify({ verdict: "yes" }), toolCalls: [] });
  expect(partial).toMatchObject({ problem: expect.stringMatching(/did not fit.*verdict/) });
});
