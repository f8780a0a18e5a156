import { type ChatMessage, estimateText } from "../domain/prompt";
import type { Redactor } from "../domain/secrets";
import { BudgetExceededError, type ChatRequest, type ChatResult, type ModelCaller, type TokenUsage } from "./ports";

export interface BudgetVerdict {
  allowed: boolean;
  /** "cost_cap" or "insufficient_credit" when refused. */
  reason: string;
  capUsd: string;
}

export interface ModelCallerDeps {
  complete(request: ChatRequest): Promise<ChatResult>;
  /** Asked before each call; absent when no billing service is configured. */
  checkBudget?(estimate: TokenUsage): Promise<BudgetVerdict>;
  /** After each call: this call's usage and its number in this attempt (from 1). */
  recordUsage(usage: TokenUsage, call: number): Promise<void>;
  redact: Redactor;
  /** What one step's answer usually costs, for the budget estimate. */
  expectedOutputTokens?: number;
}

function redactMessages(messages: ChatMessage[], redact: Redactor): ChatMessage[] {
  return messages.map((m) => {
    if (typeof m.content === "string") return { ...m, content: redact(m.content) } as ChatMessage;
    // Images stay as they are: base64 is not text, and a secret typed in a field is masked before screenshots.
    return {
      ...m,
      content: m.content.map((p) => (p.type === "text" ? { ...p, text: redact(p.text) } : p)),
    } as ChatMessage;
  });
}

/**
 * Wraps model calls with what every call needs: the budget check before, the secret redaction of the prompt, and
 * the usage record after (a provider that reports no usage is estimated at ~4 characters per token).
 */
export function createModelCaller(deps: ModelCallerDeps): ModelCaller & { totals(): TokenUsage } {
  const totals: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  let calls = 0;
  return {
    totals: () => ({ ...totals }),
    async call(request) {
      const messages = redactMessages(request.messages, deps.redact);
      const estimatedInput = messages.reduce((n, m) => n + estimateText(m.content), 0);
      if (deps.checkBudget) {
        const verdict = await deps.checkBudget({
          inputTokens: estimatedInput,
          outputTokens: deps.expectedOutputTokens ?? 400,
        });
        if (!verdict.allowed) {
          const why =
            verdict.reason === "insufficient_credit"
              ? "the project has no credit left"
              : `the cost cap${verdict.capUsd ? ` of ${verdict.capUsd} USD` : ""} was reached`;
          throw new BudgetExceededError(`Task stopped: ${why}`, verdict.reason || "cost_cap");
        }
      }
      const result = await deps.complete({ ...request, messages });
      const usage: TokenUsage = {
        inputTokens: result.usage.inputTokens || estimatedInput,
        outputTokens:
          result.usage.outputTokens ||
          Math.ceil(
            ((result.content ?? "").length +
              result.toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0)) /
              4,
          ),
      };
      totals.inputTokens += usage.inputTokens;
      totals.outputTokens += usage.outputTokens;
      await deps.recordUsage(usage, ++calls);
      return { ...result, usage };
    },
  };
}
