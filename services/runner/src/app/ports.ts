import type { ToolDefinition } from "../domain/actions";
import type { ChatMessage } from "../domain/prompt";

export interface ToolCall {
  id: string;
  name: string;
  /** Raw JSON text as the model sent it (may be invalid). */
  arguments: string;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface ChatResult {
  content: string | null;
  toolCalls: ToolCall[];
  usage: TokenUsage;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  signal?: AbortSignal;
}

/** One model call as the agent sees it: the budget is checked and usage recorded around it. */
export interface ModelCaller {
  call(request: ChatRequest): Promise<ChatResult>;
}

/** The model said no more money may be spent on this task. */
export class BudgetExceededError extends Error {
  override name = "BudgetExceededError";
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

/** The model endpoint failed for good (after retries), or refused the request. */
export class ModelError extends Error {
  override name = "ModelError";
  constructor(
    message: string,
    readonly status: number | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The sessions service says this attempt no longer owns the task (stopped, redelivered elsewhere, ended). */
export class StaleAttemptError extends Error {
  override name = "StaleAttemptError";
}
