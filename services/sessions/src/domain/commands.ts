import type {
  AttachedFile,
  CustomProxy,
  JsonValue,
  JudgeSettings,
  MailData,
  ModelParams,
  SecretDomains,
  SessionApi,
  SessionSettings,
  TaskOptions,
} from "./events";

/** A task as the caller gave it; the id is chosen before deciding, because its secrets are stored under it. */
export interface NewTask extends TaskOptions {
  taskId: string;
  task: string;
  sensitiveDataKeys: string[];
  secretDomains: SecretDomains;
  /** The task's own cost cap (a v4 run's); null = the session's. */
  maxCostUsd: string | null;
  /** Judge the run when the agent is done (v4). */
  judge?: JudgeSettings;
  /** The run's own model parameters (v4). */
  modelParams?: ModelParams;
  /** The run's own proxy (v4), without its credentials (those go to the vault). */
  customProxy?: CustomProxy;
  /** Files of the workspace the run was pointed to (v4). */
  attachedFiles?: AttachedFile[];
}

/** A message of a step, as the runner reports it. */
export interface StepMessageInput {
  role: "human" | "ai";
  type: string;
  data: string;
  summary: string | null;
  hidden: boolean;
}

/** Which model call a usage report is about: numbered within its attempt, from 1. */
export interface ModelCall {
  usageId: string;
  attempt: number;
  number: number;
}

export type StopStrategy = "task" | "session";

/** Everything that can be asked of a session: by its caller, by the runner working it, or by a reactor. */
export type SessionCommand =
  | {
      type: "CreateSession";
      settings: SessionSettings;
      options: TaskOptions;
      idempotencyKey: string | null;
      /** null = an idle keep-alive session: only a sandbox is prepared. */
      task: NewTask | null;
      preparationId: string;
      api: SessionApi;
    }
  | { type: "DispatchTask"; projectId: string; task: NewTask; api: SessionApi }
  | { type: "StopSession"; projectId: string; strategy: StopStrategy }
  /** Stops this task if it is still the session's current one (a v4 run's cancel). */
  | { type: "CancelTask"; projectId: string; taskId: string }
  /** A v4 message for the session's queue; a send with a `dedupeKey` the session has seen queues nothing more. */
  | {
      type: "QueueMessage";
      projectId: string;
      text: string;
      interrupt: boolean;
      dedupeKey: string | null;
      attachedFiles?: AttachedFile[];
    }
  /** Takes back a v4 message that is still pending. */
  | { type: "CancelQueuedMessage"; projectId: string; messageId: number }
  | { type: "DeleteSession"; projectId: string }
  | { type: "ReportSandboxReady"; browserId: string }
  | { type: "ReportSandboxFailed"; error: string }
  | { type: "ReportTaskStarted"; taskId: string; title: string | null; attempt: number }
  | {
      type: "ReportStep";
      taskId: string;
      step: number;
      summary: string;
      screenshotRef: string | null;
      messages: StepMessageInput[];
      /** 0 = not said. */
      attempt: number;
      agentRecord: string | null;
    }
  | {
      type: "ReportTaskCompleted";
      taskId: string;
      output: JsonValue;
      success: boolean;
      summary: string | null;
      judgement?: JsonValue;
    }
  | { type: "ReportTaskFailed"; taskId: string; error: string }
  /** `call` null: a runner that reports the task's totals instead of each call (older runners). */
  | { type: "ReportUsage"; taskId: string; inputTokens: number; outputTokens: number; call: ModelCall | null }
  | { type: "ReportRecording"; ref: string }
  | { type: "TimeOut"; timeoutMs: number }
  /** `taskId`: the task whose cap was reached, when billing knows it; a later task is left alone. */
  | { type: "StopForBudget"; capUsd: string; taskId: string | null }
  /** A mail for the session's temporary mailbox, already bounded (domain/mail.ts). */
  | { type: "ReceiveMail"; mail: MailData };
