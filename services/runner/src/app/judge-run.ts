import {
  JUDGE_TOOL,
  type JudgeInput,
  type Judgement,
  judgeMessages,
  type NoJudgement,
  readJudgement,
} from "../domain/judge";
import { BudgetExceededError, type ModelCaller } from "./ports";

/**
 * Asks the run's model for a verdict on the finished run, through the run's model caller: the budget is checked and
 * the judge's tokens are billed to the run like any other call. An unreadable answer gets one more try; a judge that
 * cannot be asked or understood gives no verdict and says why. Throws only when `signal` aborts (the run was stopped).
 */
export async function judgeRun(
  model: ModelCaller,
  input: JudgeInput,
  signal: AbortSignal,
): Promise<Judgement | NoJudgement> {
  const messages = judgeMessages(input);
  let problem = "";
  for (let attempt = 1; attempt <= 2; attempt++) {
    const retry = problem
      ? [{ role: "user" as const, content: `Your answer could not be used (${problem}). Call the judgement tool.` }]
      : [];
    let reply: Awaited<ReturnType<ModelCaller["call"]>>;
    try {
      reply = await model.call({ messages: [...messages, ...retry], tools: [JUDGE_TOOL], signal });
    } catch (err) {
      if (signal.aborted) throw err;
      const why =
        err instanceof BudgetExceededError ? err.message : `the model could not be asked: ${(err as Error).message}`;
      return { verdict: null, error: `Not judged: ${why}` };
    }
    const read = readJudgement(reply);
    if ("judgement" in read) return read.judgement;
    problem = read.problem;
  }
  return { verdict: null, error: `Not judged: ${problem}` };
}
