import type { DomainEvent } from "@bas/event-store";

/** Any JSON value (outputs and output schemas are caller- or agent-defined). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** What a session is set up with at creation; fixed for its life. */
export interface SessionSettings {
  projectId: string;
  model: string;
  thinkingLevel: string | null;
  useOwnKey: boolean;
  maxCostUsd: string | null;
  workspaceId: string | null;
  profileId: string | null;
  /** Lowercase country code; null = no proxy. */
  proxyCountryCode: string | null;
  screenWidth: number | null;
  screenHeight: number | null;
  record: boolean;
  /** The only hosts the session's browser may reach (lowercase patterns); absent or null = no limit. */
  allowedDomains?: string[] | null;
  inbox: boolean;
  /** The temporary mailbox's address, chosen at creation when `inbox` is on; absent or null = no mailbox. */
  inboxEmail?: string | null;
  liveUrl: string;
}

/** Secret key → the hosts it may be typed on (a domain also covers its subdomains); a key not named: anywhere. */
export type SecretDomains = Record<string, { domains: string[] }>;

/** A v4 run's `judge`: a verdict on the run once the agent is done; `context` is the caller's note for the judge. */
export interface JudgeSettings {
  context?: string;
}

/** A v4 run's `modelParams`, as checked against the model's route. */
export interface ModelParams {
  thinkingLevel?: string;
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
}

/**
 * A v4 run's own proxy, where it is only: its username and password never enter an event (they are in the secrets
 * vault, under the task). A property of the run, not the session: a follow-up run without one has none.
 */
export interface CustomProxy {
  host: string;
  port: number;
  ignoreCertErrors: boolean;
}

/** The API a session was made through: v3 sessions, or v4 conversations whose tasks are runs. */
export type SessionApi = "v3" | "v4";

/** A workspace file a v4 run is pointed to (`attachedFileIds`): the id of its upload, and its path, type and size then. */
export interface AttachedFile {
  id: string;
  path: string;
  contentType: string;
  size: number;
}

/** How the agent must shape the output of one task. */
export interface TaskOptions {
  keepAlive: boolean;
  codeMode: boolean;
  outputSchema: JsonValue | null;
}

/** A message of the session's conversation, as stored in an event (the id is fixed there, so replays agree). */
export interface MessageData {
  id: string;
  role: "human" | "ai";
  type: string;
  data: string;
  summary: string | null;
  hidden: boolean;
}

export type SessionCreated = DomainEvent<
  "SessionCreated",
  SessionSettings &
    TaskOptions & {
      idempotencyKey: string | null;
      /** Set when the session was created without a task: the id of the assignment that only prepares a sandbox. */
      preparationId: string | null;
      /** Absent in events written before v4: "v3". */
      api?: SessionApi;
    }
>;
export type TaskDispatched = DomainEvent<
  "TaskDispatched",
  TaskOptions & {
    taskId: string;
    task: string;
    /** Keys only: the values are encrypted at rest elsewhere and never enter the event stream. */
    sensitiveDataKeys: string[];
    /** Keys that may only be typed on some hosts (absent in events written before: none). */
    secretDomains: SecretDomains;
    /** The task as the conversation's first human message. */
    messageId: string;
    /** The task's own cost cap (a v4 run's); absent or null = the session's. */
    maxCostUsd?: string | null;
    /** The queued message this task runs (v4), when it came from the session's queue. */
    queuedMessageId?: number;
    /** Judge the run when the agent is done (a v4 run created with `judge`). */
    judge?: JudgeSettings;
    /** The run's own model parameters (v4). */
    modelParams?: ModelParams;
    /** The run's own proxy (v4), without its credentials. */
    customProxy?: CustomProxy;
    /** Files of the workspace the run was pointed to (v4). */
    attachedFiles?: AttachedFile[];
  }
>;
export type SandboxReady = DomainEvent<"SandboxReady", { browserId: string }>;
export type SandboxFailed = DomainEvent<"SandboxFailed", { error: string }>;
export type TaskStarted = DomainEvent<"TaskStarted", { taskId: string; title: string; attempt: number }>;
export type StepRecorded = DomainEvent<
  "StepRecorded",
  {
    taskId: string;
    step: number;
    summary: string;
    screenshotRef: string | null;
    messages: MessageData[];
    /** The attempt that took the step (absent in events written before attempts continued each other). */
    attempt?: number;
    /** The agent's own record of the step (opaque JSON), for a later attempt to continue from. */
    agentRecord?: string | null;
  }
>;
/**
 * Tokens of the task. With `usageId`: one model call's tokens (call `call` of attempt `attempt`), added to the
 * task's totals. Without (events written before calls were reported one by one): the task's totals so far.
 */
export type UsageReported = DomainEvent<
  "UsageReported",
  { taskId: string; inputTokens: number; outputTokens: number; usageId?: string; attempt?: number; call?: number }
>;
export type TaskCompleted = DomainEvent<
  "TaskCompleted",
  {
    taskId: string;
    output: JsonValue;
    success: boolean;
    summary: string | null;
    /** The judge's verdict, when the task was to be judged. */
    judgement?: JsonValue;
  }
>;
export type TaskFailed = DomainEvent<"TaskFailed", { taskId: string; error: string }>;
/** `interrupted`: a message sent with `interrupt` (v4) took the task's place. */
export type TaskStopReason = "user" | "cost_cap" | "session_stopped" | "timed_out" | "interrupted";
export type TaskStopped = DomainEvent<"TaskStopped", { taskId: string; reason: TaskStopReason; summary: string }>;
export type SessionStopReason = "user" | "task_finished" | "deleted";
export type SessionStopped = DomainEvent<"SessionStopped", { reason: SessionStopReason }>;
export type SessionTimedOut = DomainEvent<"SessionTimedOut", { inactiveSince: string }>;
export type SessionDeleted = DomainEvent<"SessionDeleted", Record<string, never>>;
export type RecordingAdded = DomainEvent<"RecordingAdded", { ref: string }>;
/** How a v4 message joins the queue: in line, or cancelling the active run to go next. */
export type QueueMode = "queue" | "interrupt";
export type MessageQueued = DomainEvent<
  "MessageQueued",
  {
    messageId: number;
    text: string;
    mode: QueueMode;
    dedupeKey: string | null;
    /** Files of the workspace the message's run is pointed to (absent: none). */
    attachedFiles?: AttachedFile[];
  }
>;
export type QueuedMessageCancelled = DomainEvent<"QueuedMessageCancelled", { messageId: number }>;
/** A v4 conversation whose browser timed out takes a new turn: set up again, with a new browser. */
export type SessionReopened = DomainEvent<"SessionReopened", Record<string, never>>;
/** A mail as the mailbox keeps it: bounded (see `MAILBOX_LIMITS` in mail.ts). */
export interface MailData {
  /** The From header as written, else the envelope sender. */
  from: string;
  /** The session's address it was delivered to. */
  to: string;
  subject: string;
  /** The mail's Date header (ISO-8601), when it had a valid one. */
  date: string | null;
  text: string;
  textTruncated: boolean;
  links: string[];
  sizeBytes: number;
}
/** A mail reached the session's temporary mailbox; recorded before the SMTP server says 250. */
export type MailReceived = DomainEvent<"MailReceived", MailData & { mailId: string }>;

/** Everything that can happen to a session. */
export type SessionEvent =
  | SessionCreated
  | TaskDispatched
  | SandboxReady
  | SandboxFailed
  | TaskStarted
  | StepRecorded
  | UsageReported
  | TaskCompleted
  | TaskFailed
  | TaskStopped
  | SessionStopped
  | SessionTimedOut
  | SessionDeleted
  | RecordingAdded
  | MessageQueued
  | QueuedMessageCancelled
  | SessionReopened
  | MailReceived;

export type SessionEventType = SessionEvent["type"];

/** The aggregate type in the event store (subject `<ns>.events.session.<id>`). */
export const SESSION_AGGREGATE = "session";
