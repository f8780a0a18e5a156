import type * as billing from "./gen/bas/v1/billing";
import type * as browserPool from "./gen/bas/v1/browser_pool";
import type * as sessions from "./gen/bas/v1/sessions";

/**
 * The events one service publishes and others consume: aggregate types (the subject `<ns>.events.<type>.<id>`) and
 * event type names. The data of each event is the JSON of the proto message named like its type, decoded by the
 * consumer's adapter with that message's `fromJSON`.
 */
export const SESSION_AGGREGATE = "session";
export const SESSION_EVENT_TYPES = [
  "SessionCreated",
  "TaskDispatched",
  "SandboxReady",
  "SandboxFailed",
  "TaskStarted",
  "StepRecorded",
  "UsageReported",
  "TaskCompleted",
  "TaskFailed",
  "TaskStopped",
  "SessionStopped",
  "SessionTimedOut",
  "SessionDeleted",
  "RecordingAdded",
  "MessageQueued",
  "QueuedMessageCancelled",
  "SessionReopened",
  "MailReceived",
] as const;
export type SessionEventType = (typeof SESSION_EVENT_TYPES)[number];

/** After any of these a session has ended: its browser and its runner have no more use. */
export const SESSION_ENDED_EVENT_TYPES = [
  "SessionStopped",
  "SessionTimedOut",
  "SessionDeleted",
  "SandboxFailed",
] as const satisfies readonly SessionEventType[];

/**
 * Change notices: core NATS, `<ns>.changes.<kind>.<sessionId>`, no payload. The sessions service publishes one after
 * a read model of the session committed a change, so that gateways drop what they cached of it and wake the event
 * streams that wait on it; the kind says which read model, so that a stream wakes only for what it reads.
 */
export const SESSION_CHANGE_KINDS = {
  /** The session's v3 view or its costs. */
  view: "session",
  /** The session's v3 messages. */
  messages: "session-messages",
  /** The v4 runs of the session: a status or an event. */
  runs: "session-runs",
} as const;
export type SessionChangeKind = (typeof SESSION_CHANGE_KINDS)[keyof typeof SESSION_CHANGE_KINDS];

export const BROWSER_AGGREGATE = "browser";
export const BROWSER_EVENT_TYPES = [
  "BrowserRequested",
  "BrowserStarted",
  "BrowserStopped",
  "BrowserRecordingSaved",
  "BrowserFileDownloaded",
] as const;
export type BrowserEventType = (typeof BROWSER_EVENT_TYPES)[number];

/** Billing's ledgers: one per session, run, browser and project (id = that id). */
export const LEDGER_AGGREGATES = {
  session: "ledger-session",
  run: "ledger-run",
  browser: "ledger-browser",
  project: "ledger-project",
} as const;
export const LEDGER_EVENT_TYPES = ["ChargeRecorded", "BudgetExceeded", "BudgetCapSet"] as const;
export type LedgerEventType = (typeof LEDGER_EVENT_TYPES)[number];

/** Every event type named here has its message: a name without one fails the type-check. */
export type EventMessages = [
  { [K in SessionEventType]: (typeof sessions)[K] },
  { [K in BrowserEventType]: (typeof browserPool)[K] },
  { [K in LedgerEventType]: (typeof billing)[K] },
];

/**
 * What a publisher's event data must be assignable to, for its proto message: JSON in which `null` (how the domain
 * says "none") reads as absent, as proto3 JSON reads it; a `null` list reads as an empty repeated field.
 */
export type AsProtoJson<T> = T extends readonly (infer U)[]
  ? AsProtoJson<U>[]
  : T extends object
    ? { [K in keyof T]: AsProtoJson<Exclude<T[K], null>> | NullAs<T[K]> }
    : T;

/** How a nullable field reads in proto3 JSON: absent, or for a list the empty list (`[]` is in its type already). */
type NullAs<V> = null extends V ? (Exclude<V, null> extends readonly unknown[] ? never : undefined) : never;

/** Compile-time contract check: `Assignable<Data, Message>` fails the type-check when Data drifts from Message. */
export type Assignable<T extends U, U> = T;
