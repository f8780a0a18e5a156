import type { OutputMode } from "../domain/actions";
import type { Redactor } from "../domain/secrets";
import type { BrowserDriver } from "./browser-driver";
import type { FinishDeps } from "./finish-task";
import type { ModelCaller } from "./ports";

export interface AgentTask {
  task: string;
  mode: OutputMode;
  secretKeys: readonly string[];
  maxSteps: number;
  /** Send a screenshot with each step (the model takes images). */
  vision: boolean;
}

/** A message of a step as the sessions service stores it. */
export interface StepMessage {
  role: "ai" | "human";
  type: string;
  data: string;
  summary?: string;
  hidden: boolean;
}

export interface RecordedStep {
  step: number;
  summary: string;
  messages: StepMessage[];
  screenshot?: Uint8Array;
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
  /** Aborted when the task is stopped: the loop ends within the current step. */
  signal: AbortSignal;
  now(): Date;
  options: AgentOptions;
}

export type AgentOutcome =
  | { kind: "completed"; success: boolean; output: unknown; summary: string; steps: number }
  | { kind: "stopped"; steps: number };
