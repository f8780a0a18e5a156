import { clip } from "./clip";
import { z } from "zod";
import type { ToolDefinition } from "./actions";
import { renderHistory, type StepRecord } from "./history";
import type { ChatMessage } from "./prompt";

/**
 * What the judge of a run sees: the task, the caller's note for the judge, every step, the last page and how the
 * agent ended.
 */
export interface JudgeInput {
  task: string;
  context?: string;
  records: readonly StepRecord[];
  /** The page as the agent last saw it. */
  lastPage: string;
  success: boolean;
  output: unknown;
  summary: string;
}

/** The verdict on a run, as callers read it in `judgement`. */
export interface Judgement {
  /** The task was achieved, as the steps show. */
  verdict: boolean;
  reasoning: string;
  /** Why it was not achieved; null when it was. */
  failureReason: string | null;
  /** The task could not be done as asked (the site has no such thing, it needs what the agent was not given). */
  impossibleTask: boolean;
  /** A CAPTCHA or another human check stood in the way. */
  reachedCaptcha: boolean;
}

/** No verdict: the judge could not be asked, or its answer could not be read. */
export interface NoJudgement {
  verdict: null;
  error: string;
}

const Verdict = z.strictObject({
  verdict: z.boolean().describe("true only if the steps show that the task was fully achieved"),
  reasoning: z.string().min(1).describe("The evidence for the verdict, in a few sentences"),
  failureReason: z.string().nullable().describe("Why the task was not achieved; null when it was"),
  impossibleTask: z.boolean().describe("The task could not be done as asked, whatever the agent did"),
  reachedCaptcha: z.boolean().describe("A CAPTCHA or another human check blocked the agent"),
});

export const JUDGE_TOOL: ToolDefinition = {
  type: "function",
  function: {
    name: "judgement",
    description: "Give the verdict on the agent's run.",
    parameters: (() => {
      const json = z.toJSONSchema(Verdict) as Record<string, unknown>;
      delete json.$schema;
      return json;
    })(),
  },
};

/** The judge reads many steps, but a prompt must stay bounded. */
const HISTORY = { recentSteps: 12, maxChars: 24_000 };
const ANSWER_CHARS = 8_000;
const PAGE_CHARS = 12_000;

const SYSTEM = [
  "You judge whether a browser agent achieved the task it was given.",
  "Judge from the evidence only: its steps, what it extracted, and the last page it saw.",
  "A final answer the steps do not support, an invented fact, or a claim of success without evidence is a failure.",
  "A partly done task is a failure; say what is missing.",
  "Answer by calling the `judgement` tool once.",
].join("\n");

/** The judge's prompt for one run. Pure. */
export function judgeMessages(input: JudgeInput): ChatMessage[] {
  const answer = typeof input.output === "string" ? input.output : JSON.stringify(input.output ?? null);
  const parts = [
    `The task:\n${input.task}`,
    ...(input.context ? [`What the user says about judging it:\n${input.context}`] : []),
    `The agent's steps:\n${renderHistory(input.records, HISTORY)}`,
    `The page as the agent last saw it:\n${clip(input.lastPage || "(none)", PAGE_CHARS)}`,
    `The agent ended saying it ${input.success ? "succeeded" : "did not succeed"}: ${input.summary}`,
    `Its final answer:\n${clip(answer, ANSWER_CHARS)}`,
  ];
  return [
    { role: "system", content: SYSTEM },
    { role: "user", content: parts.join("\n\n") },
  ];
}

/**
 * The verdict in the judge's reply: the `judgement` tool call's arguments, or the same JSON as plain text from a model
 * that does not call tools. A reply without a readable verdict is a problem, said in words. Pure.
 */
export function readJudgement(reply: {
  content: string | null;
  toolCalls: readonly { name: string; arguments: string }[];
}): { judgement: Judgement } | { problem: string } {
  const raw = reply.toolCalls.find((c) => c.name === JUDGE_TOOL.function.name)?.arguments ?? reply.content ?? "";
  let value: unknown;
  try {
    value = JSON.parse(raw.trim().replace(/^```(?:json)?\s*|\s*```$/g, ""));
  } catch {
    return { problem: "the judge's answer was not JSON" };
  }
  const parsed = Verdict.safeParse(value);
  if (!parsed.success) {
    return { problem: `the judge's answer did not fit: ${z.prettifyError(parsed.error).replace(/\n/g, " ")}` };
  }
  const v = parsed.data;
  return { judgement: { ...v, failureReason: v.verdict ? null : (v.failureReason ?? "not given") } };
}
