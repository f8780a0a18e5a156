import type { FileAction } from "../domain/file-actions";
import type { MailAction } from "../domain/mail-actions";
import type { BrowserDriver } from "./browser-driver";
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

/** The file tools of a task with a workspace; results and thrown ToolErrors are written for the model. */
export interface WorkspaceTools {
  run(action: FileAction, browser: BrowserDriver, signal: AbortSignal): Promise<string>;
}

/** The mail tools of a session with a temporary mailbox; results and thrown ToolErrors are written for the model. */
export interface MailboxTools {
  run(action: MailAction, signal: AbortSignal): Promise<string>;
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

/** A later attempt of the task took over (this runner seemed gone): this one must stop without touching anything. */
export class SupersededAttemptError extends StaleAttemptError {
  override name = "SupersededAttemptError";
}

/** What the runner counts for operators (Prometheus in production). */
export interface RunnerMetrics {
  /** A model call ended: how long it took, how it ended, and the tokens the provider reported for it. */
  modelCalled(call: {
    model: string;
    seconds: number;
    outcome: "ok" | "error" | "cancelled";
    usage?: TokenUsage;
  }): void;
  /** An agent step ended: observed, decided, acted and recorded. */
  stepTaken(seconds: number): void;
}

/** How long a dependency may be unavailable before the work that needs it fails, and who hears about the wait. */
export interface OutagePolicy {
  graceMs: number;
  /** Called before each wait for `dependency` (e.g. "sessions", "billing", "NATS"). */
  onWait?(dependency: string, err: unknown, waitedMs: number): void;
}
