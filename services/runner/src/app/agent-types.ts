import type { OutputMode, ToolAccess } from "../domain/actions";
import type { StepRecord } from "../domain/history";
import type { EarlierTurn } from "../domain/prompt";
import type { Redactor, SecretDomains } from "../domain/secrets";
import type { PendingStep, StepMemory, StepMessage } from "../domain/step-memory";
import type { BrowserDriver } from "./browser-driver";
import type { FinishDeps } from "./finish-task";
import type { MailboxTools, ModelCaller, RunnerMetrics, WorkspaceTools } from "./ports";

export interface AgentTask {
  task: string;
  /** The session's earlier tasks and how they ended (a follow-up continues a conversation). */
  earlierTurns: readonly EarlierTurn[];
  mode: OutputMode;
  secretKeys: readonly string[];
  /** Where each secret may be typed (a key not named: anywhere). */
  secretDomains: SecretDomains;
  /** The only hosts the browser may reach (its proxy refuses others); absent or empty = no limit. */
  allowedDomains?: readonly string[];
  /** The session's temporary mailbox address (with `AgentDeps.mailbox`): the model is told it. */
  inboxEmail?: string;
  /** Paths of workspace files the caller attached to the task (with `AgentDeps.workspace`): the model is told them. */
  attachedFiles?: readonly string[];
  maxSteps: number;
  /** Send a screenshot with each step (the model takes images). */
  vision: boolean;
}

export type { StepMessage };

/** The tools a task has besides the browser's, from what its deps provide. */
export function toolAccess(deps: Pick<AgentDeps, "workspace" | "mailbox">): ToolAccess {
  return { workspace: !!deps.workspace, mailbox: !!deps.mailbox };
}

/** What the agent reports of a step; the worker adds which browser it ran in. */
export interface RecordedStep {
  step: number;
  summary: string;
  messages: StepMessage[];
  screenshot?: Uint8Array;
  memory: Omit<StepMemory, "browserId">;
}

/** The step about to be acted on, for the write-ahead record. */
export type PlannedStep = Omit<PendingStep, "browserId">;

/** The browser after a lost connection: the same one again, or a new one (`fresh`: the old one is gone). */
export interface Reconnected {
  browser: BrowserDriver;
  fresh: boolean;
}

export interface AgentOptions {
  maxObserveChars: number;
  extractMaxChars: number;
  /** How often a non-conforming structured answer is sent back before giving up. */
  schemaRetries: number;
  /** Take a screenshot each step for the step record (a blob store is configured). */
  screenshots: boolean;
}

export interface AgentDeps extends FinishDeps {
  browser: BrowserDriver;
  model: ModelCaller;
  /** The task's secret values, fetched the first time a placeholder is typed. */
  secrets(): Promise<Record<string, string>>;
  redact: Redactor;
  /** Reports a step; throws StaleAttemptError when this attempt no longer owns the task. */
  recordStep(step: RecordedStep): Promise<void>;
  /**
   * Called after the model decided a step and before its first action: writes down what is about to be done, so
   * that an attempt that dies while acting is never followed by the same actions again. Throws when this attempt
   * no longer owns the task.
   */
  beforeActing?(step: PlannedStep): Promise<void>;
  /**
   * The connection to the browser was lost: waits for the session's browser (the same one, or a new one when it is
   * gone) and connects again. Absent: the loss ends the attempt.
   */
  reconnect?(): Promise<Reconnected>;
  /** Aborted when the task is stopped: the loop ends within the current step. */
  signal: AbortSignal;
  now(): Date;
  options: AgentOptions;
  /** The task's workspace: offered to the model as file tools. */
  workspace?: WorkspaceTools;
  /** The session's temporary mailbox: offered to the model as mail tools. */
  mailbox?: MailboxTools;
  /** Counts each step's duration; absent where the loop runs on its own (its tests). */
  metrics?: Pick<RunnerMetrics, "stepTaken">;
}

export type AgentOutcome =
  | {
      kind: "completed";
      success: boolean;
      output: unknown;
      summary: string;
      steps: number;
      /** Every step of the task, the earlier attempts' too (what a judge of the run reads). */
      records: readonly StepRecord[];
      /** The page as the model last saw it, rendered and redacted. */
      lastPage: string;
    }
  | { kind: "stopped"; steps: number };
