import type { MessageQueue } from "../domain/queue";
import type { AttachedFile } from "../domain/events";
import type { WebhookEvent } from "../domain/webhook-events";
import type { RunStatus } from "../domain/run-view";
import type { Session, SessionStatus } from "../domain/state";
import type { CallDeadline } from "./call-deadline";

/** Billing's ledger of one session (aggregate id = session id): costs and budget events come from there. */
export const LEDGER_SESSION = "ledger-session";

/** A session's money and bandwidth, copied from billing's ledger (decimal strings, "0" until billing reports). */
export interface SessionCosts {
  proxyUsedMb: string;
  llmCostUsd: string;
  proxyCostUsd: string;
  browserCostUsd: string;
  totalCostUsd: string;
}

export const ZERO_COSTS: SessionCosts = {
  proxyUsedMb: "0",
  llmCostUsd: "0",
  proxyCostUsd: "0",
  browserCostUsd: "0",
  totalCostUsd: "0",
};

/** A session as read: the folded aggregate and its costs. */
export interface SessionRecord {
  session: Session;
  /**
   * The status to show: the session's own, except that one that ended shows the status it had before until its
   * costs are final (its browser's last usage is priced), so that a terminal status always comes with final costs.
   */
  status: SessionStatus;
  costs: SessionCosts;
}

export interface SessionPage {
  records: SessionRecord[];
  total: number;
  page: number;
  pageSize: number;
}

/** A session as its read model shows it, with the stream sequence of the last event applied to it. */
export interface ProjectedSessionRecord extends SessionRecord {
  version: number;
}

/** Queries of the sessions read model. Deleted sessions are never returned. */
export interface SessionQueries {
  get(projectId: string, sessionId: string): Promise<ProjectedSessionRecord | undefined>;
  /** Newest first. Screenshot and recordings are left out: lists never carry them. */
  list(projectId: string, page: number, pageSize: number): Promise<SessionPage>;
  /** Ids of created or idle sessions whose last change is older than `before`. */
  inactive(before: Date, limit: number): Promise<string[]>;
}

export interface MessageRecord {
  id: string;
  sessionId: string;
  role: string;
  type: string;
  data: string;
  summary: string | null;
  screenshotRef: string | null;
  hidden: boolean;
  createdAt: Date;
}

export interface MessageCursor {
  after?: string;
  before?: string;
  limit: number;
  /** Without `after` or `before`: the newest `limit` messages rather than the first ones (`hasMore`: older exist). */
  latest?: boolean;
}

/** `complete`: the session has ended and this page reaches its last message (no more will come). */
export type MessagePage = { messages: MessageRecord[]; hasMore: boolean; complete: boolean };

export interface MessageQueries {
  /** Chronological. Names the cursor that is not a message of this session, if one is not. */
  list(sessionId: string, cursor: MessageCursor): Promise<MessagePage | { unknownCursor: "after" | "before" }>;
}

/** The username and password of a run's custom proxy. */
export interface ProxyCredentials {
  username?: string;
  password?: string;
}

/** What a task keeps secret: its sensitiveData values (by key), and its custom proxy's credentials if any. */
export interface TaskSecrets {
  values: Record<string, string>;
  proxyCredentials?: ProxyCredentials;
}

/** A task's secrets, encrypted at rest, per session and task. */
export interface SecretsVault {
  put(sessionId: string, taskId: string, secrets: TaskSecrets): Promise<void>;
  /** The task's secrets; none (`{ values: {} }`) when nothing is stored for it. */
  get(sessionId: string, taskId: string): Promise<TaskSecrets>;
  /** Forgets one task's values, or all of the session's when no task is named. */
  forget(sessionId: string, taskId?: string): Promise<void>;
}

/** Whatever waits for read models to include an appended event. */
export interface ReadYourWrites {
  /**
   * Resolves once every read model has applied `sequence`; false when that took longer than allowed (`timeoutMs`,
   * or the configured wait when not given).
   */
  waitFor(sequence: number, timeoutMs?: number): Promise<boolean>;
}

/** What a create may read and write while it holds its project's lock, on the lock's own connection. */
export interface LockedProject {
  /** The project's active sessions, counting those created under the lock that the read model does not show yet. */
  countActive(): Promise<number>;
  /**
   * Counts a session that was just created or reopened (appended up to `version`) until the read model has applied
   * that version.
   */
  reserve(sessionId: string, version: number): Promise<void>;
}

/** Serializes work per project across every replica. */
export interface ProjectLock {
  /**
   * Runs `fn` holding the project's lock. Waiting for it is bounded by the caller's deadline: running out is an
   * `UnavailableError`, and `fn` has not run.
   */
  run<T>(projectId: string, deadline: CallDeadline, fn: (locked: LockedProject) => Promise<T>): Promise<T>;
}

/** A v4 run as read: its task's progress, its tokens and its cost from billing's ledger of the run. */
export interface RunRecord {
  id: string;
  sessionId: string;
  workspaceId: string | null;
  task: string;
  title: string | null;
  model: string;
  /** Shown status: a run that ended shows "running" until its cost is final (see `RunQueries`). */
  status: RunStatus;
  result: string | null;
  error: string | null;
  /** The judge's verdict (a run created with `judge` that completed). */
  judgement: Record<string, unknown> | null;
  /** The upload ids of the files the run was pointed to; null when none. */
  attachedFileIds: string[] | null;
  /** Those files as they were when the run was pointed to them, in the same order. */
  attachments: AttachedFile[];
  inputTokens: number;
  outputTokens: number;
  totalCostUsd: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface RunEventRecord {
  id: number;
  runId: string;
  ts: Date;
  type: string;
  data: Record<string, unknown>;
}

/** A v4 session, shown through its latest run. */
export interface ConversationRecord {
  sessionId: string;
  workspaceId: string | null;
  latestRunId: string;
  task: string;
  title: string | null;
  status: RunStatus;
  createdAt: Date;
  updatedAt: Date;
  /** The conversation's mailbox address (created with `agentmail`), or null. */
  inboxEmail: string | null;
}

/** A page of a keyset-paged list, newest first; `nextCursor` is opaque to callers. */
export interface KeysetPage<T> {
  items: T[];
  nextCursor: string | null;
  hasMore: boolean;
}

/**
 * Queries of the v4 read model; another project's runs and sessions are never returned. A run that ended shows the
 * status it had before until billing has charged every token it reported (or `finalCostsWaitMs` passed), so a
 * caller that polls until a terminal status reads final costs.
 */
/** What a status poll answers. */
export interface RunStatusView {
  status: RunStatus;
  sessionId: string;
  /** The run has ended but shows its previous status until its costs are final (see `RunQueries`). */
  awaitingCosts: boolean;
}

export interface RunQueries {
  status(projectId: string, runId: string): Promise<RunStatusView | undefined>;
  get(projectId: string, runId: string): Promise<RunRecord | undefined>;
  list(
    projectId: string,
    page: { cursor: string | null; limit: number; sessionId: string | null },
  ): Promise<KeysetPage<RunRecord>>;
  /** The run's events with ids above `after`, in order; `complete` once the run has ended (no more will come). */
  events(
    runId: string,
    after: number,
    limit: number,
  ): Promise<{ events: RunEventRecord[]; hasMore: boolean; complete: boolean }>;
  conversation(projectId: string, sessionId: string): Promise<ConversationRecord | undefined>;
  conversations(
    projectId: string,
    page: { cursor: string | null; limit: number },
  ): Promise<KeysetPage<ConversationRecord>>;
  /** The session a run belongs to, whatever its project (for billing's events about the run). */
  sessionOfRun(runId: string): Promise<string | undefined>;
  /** The conversation's message queue as the session's read model folded it; undefined: no such conversation. */
  queue(projectId: string, sessionId: string): Promise<MessageQueue | undefined>;
}

export interface WebhookEndpointRecord {
  id: string;
  url: string;
  createdAt: Date;
  /** The event types it gets; empty: every type. */
  events: string[];
}

export interface WebhookDeliveryRecord {
  id: string;
  eventType: string;
  state: "pending" | "delivered" | "failed";
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: Date;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  body: string;
}

/** A delivery the sender holds (leased) and must POST now. */
export interface DueDelivery {
  id: string;
  url: string;
  body: string;
  attempts: number;
  /** When its attempts began: its creation, or the last resend. */
  since: Date;
  secret: string;
}

export type AttemptOutcome = { status?: number; error?: string } & (
  | { kind: "delivered" }
  | { kind: "failed" }
  | { kind: "retry"; retryAt: Date }
);

/** Webhook endpoints and their deliveries (the outbox). */
export interface WebhookStore {
  /**
   * Registers the endpoint and queues `test` for it, at once; undefined when the project has `maxEndpoints` already
   * (counted under a lock of the project's, so concurrent registrations cannot pass it).
   */
  createEndpoint(
    endpoint: { projectId: string; url: string; secret: string; events: string[]; maxEndpoints: number },
    test: Omit<WebhookEvent, "projectId" | "occurredAt">,
  ): Promise<WebhookEndpointRecord | undefined>;
  listEndpoints(projectId: string): Promise<WebhookEndpointRecord[]>;
  /** False when the project has no such endpoint. */
  deleteEndpoint(projectId: string, endpointId: string): Promise<boolean>;
  /**
   * Changes what is given; a new URL (one that differs) also gets `test` queued, and the endpoint's pending
   * deliveries are due at once. Undefined when the project has no such endpoint.
   */
  updateEndpoint(
    projectId: string,
    endpointId: string,
    change: { url?: string; events?: string[] },
    test: Omit<WebhookEvent, "projectId" | "occurredAt">,
  ): Promise<WebhookEndpointRecord | undefined>;
  /** Seals a new secret for the endpoint; undefined when the project has no such endpoint. */
  rotateSecret(projectId: string, endpointId: string, secret: string): Promise<WebhookEndpointRecord | undefined>;
  /**
   * Makes a delivery that is over (delivered or failed) due again at once, its attempts counted afresh; "pending"
   * when it is not over, undefined when the project's endpoint has no such delivery.
   */
  resendDelivery(
    projectId: string,
    endpointId: string,
    deliveryId: string,
  ): Promise<WebhookDeliveryRecord | "pending" | undefined>;
  /** Newest first; undefined when the project has no such endpoint. */
  listDeliveries(projectId: string, endpointId: string, limit: number): Promise<WebhookDeliveryRecord[] | undefined>;
  /** Up to `limit` deliveries due now, leased for `leaseMs` (another sender skips them meanwhile). */
  claimDue(limit: number, leaseMs: number): Promise<DueDelivery[]>;
  recordAttempt(id: string, outcome: AttemptOutcome): Promise<void>;
}

/** A session's live view link (its `liveUrl`) and the check of the token it carries. */
export interface LiveLinks {
  urlFor(sessionId: string): string;
  verify(sessionId: string, token: string): boolean;
}

/** A workspace: a project's persistent file storage. */
export interface WorkspaceRecord {
  id: string;
  projectId: string;
  name: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WorkspaceFileRecord {
  path: string;
  size: number;
  contentType: string;
  lastModified: Date;
  blobRef: string;
}

/** The file to record at a path (its bytes already stored as a blob), with the id of its v4 upload if it is one. */
export type NewWorkspaceFile = Omit<WorkspaceFileRecord, "lastModified"> & { uploadId?: string };

/**
 * Workspaces and their file catalogues (source data: what callers stored). Each call names the project; another
 * project's workspace is as absent as a missing one.
 */
export interface WorkspaceStore {
  /**
   * Creates the workspace unless the project keeps `maxPerProject` already (undefined then), counted under a lock of
   * the project's, so creates at the same instant cannot pass it.
   */
  create(
    workspace: { id: string; projectId: string; name: string | null },
    maxPerProject: number,
  ): Promise<WorkspaceRecord | undefined>;
  /** Creates the workspace unless it exists (a deleted one comes back empty). */
  ensure(workspace: { id: string; projectId: string; name: string | null }): Promise<void>;
  get(projectId: string, id: string): Promise<WorkspaceRecord | undefined>;
  /** Newest first. */
  list(projectId: string, offset: number, limit: number): Promise<{ items: WorkspaceRecord[]; total: number }>;
  rename(projectId: string, id: string, name: string | null): Promise<WorkspaceRecord | undefined>;
  /** Deletes the workspace and its catalogue; the blob references of its files, or undefined when there is none. */
  remove(projectId: string, id: string): Promise<string[] | undefined>;
  usedBytes(projectId: string, id: string): Promise<number | undefined>;
  /** By path, after `after` (exclusive), paths starting with `prefix`. */
  listFiles(
    workspaceId: string,
    options: { prefix: string; after?: string; limit: number },
  ): Promise<WorkspaceFileRecord[]>;
  /**
   * One level of a listing: the files right under `prefix` and the folders below it (each as `prefix` + its name +
   * "/"), ordered together by that path, after `after` (exclusive).
   */
  listLevel(
    workspaceId: string,
    options: { prefix: string; after?: string; limit: number },
  ): Promise<Array<{ folder: string } | { file: WorkspaceFileRecord }>>;
  /** The files at these paths now (to say which uploads replace one). */
  filesAt(workspaceId: string, paths: readonly string[]): Promise<WorkspaceFileRecord[]>;
  /**
   * Records the file at its path, atomically against the quota: `maxBytes` may not be passed by the workspace's files
   * afterwards (QuotaExceededError, nothing changed). The blob of the file it replaced, if any.
   */
  commit(
    projectId: string,
    workspaceId: string,
    file: NewWorkspaceFile,
    maxBytes: number,
  ): Promise<{ file: WorkspaceFileRecord; replacedBlobRef: string | null }>;
  /** The blob of the file removed, or null when the path held none. */
  deleteFile(workspaceId: string, path: string): Promise<string | null>;
  /**
   * Blobs no file refers to any more (a replaced or deleted file's, a deleted workspace's), oldest first: `commit`,
   * `deleteFile` and `remove` record them in their own transaction; they stay until `forgetReleased`. So do blobs
   * expected for an upload whose commit did not come within its grace (`expectBlob`).
   */
  releasedBlobs(limit: number): Promise<string[]>;
  /** A blob about to be stored for an upload: released after a grace unless `commit` records it first. */
  expectBlob(ref: string): Promise<void>;
  forgetReleased(refs: readonly string[]): Promise<void>;
  /** The files these v4 uploads stored, as long as no later write replaced them. */
  filesByUpload(
    workspaceId: string,
    uploadIds: readonly string[],
  ): Promise<({ uploadId: string } & Pick<WorkspaceFileRecord, "path" | "contentType" | "size">)[]>;
}

/** A mail of a session's temporary mailbox, as read. */
export interface MailRecord {
  id: string;
  sessionId: string;
  from: string;
  to: string;
  subject: string;
  date: Date | null;
  receivedAt: Date;
  text: string;
  textTruncated: boolean;
  links: string[];
}

/** Queries of the mailbox read model. */
export interface MailboxQueries {
  /** The session an address belongs to, and whether its mailbox still takes mail (the session has not ended). */
  owner(address: string): Promise<{ sessionId: string; open: boolean } | undefined>;
  /** The session's mail, newest first. */
  list(sessionId: string): Promise<MailRecord[]>;
  get(sessionId: string, mailId: string): Promise<MailRecord | undefined>;
}
