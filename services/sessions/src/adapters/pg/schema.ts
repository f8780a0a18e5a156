import type { ColumnType } from "kysely";
import type { AttachedFile } from "../../domain/events";
import type { Session } from "../../domain/state";

/** Bigints come back from pg as strings; we write numbers. */
type Int8 = ColumnType<string, number, number>;
type Timestamp = ColumnType<Date, string, string>;

/** The sessions service's tables. Read models are rebuilt from the stream; `session_secrets` is source data. */
export interface SessionsDb {
  sessions_view: {
    id: string;
    project_id: string;
    /** "v3" or "v4"; rows written before v4 have the default "v3". */
    api: ColumnType<string, string | undefined, string>;
    status: string;
    deleted: boolean;
    created_at: Timestamp;
    updated_at: Timestamp;
    /** The folded aggregate state (json, not jsonb: the agent's output keeps its key order). */
    doc: ColumnType<Session, string, string>;
    /** The last of created/idle/running the session had (shown after it ended until its costs are final). */
    last_active_status: string | null;
    /** The stream sequence of the last event applied (bigint, read as a string). */
    version: ColumnType<string, number | undefined, number>;
  };
  /** The browsers browser-pool opened for sessions (from its `BrowserRequested` events). */
  session_browsers: {
    browser_id: string;
    session_id: string;
  };
  /** Browsers whose last usage report billing has charged (from `ChargeRecorded.lastReport`): their cost is final. */
  session_browser_final_charges: {
    browser_id: string;
    session_id: string;
  };
  session_costs: {
    session_id: string;
    sequence: Int8;
    proxy_used_mb: string;
    llm_cost_usd: string;
    proxy_cost_usd: string;
    browser_cost_usd: string;
    total_cost_usd: string;
  };
  session_messages: {
    id: string;
    session_id: string;
    sequence: Int8;
    position: number;
    role: string;
    type: string;
    data: string;
    summary: string | null;
    screenshot_ref: string | null;
    hidden: boolean;
    created_at: Timestamp;
  };
  /** A project's webhook endpoints (source data, migrated); the secret sealed under SECRETS_KEY. */
  webhook_endpoints: {
    id: string;
    project_id: string;
    url: string;
    iv: Buffer;
    tag: Buffer;
    sealed_secret: Buffer;
    created_at: ColumnType<Date, string, never>;
    deleted_at: ColumnType<Date | null, never, string>;
    /** The event types it gets; null: every type. */
    events: string[] | null;
  };
  /** One row per event and endpoint: the outbox the sender works through, and the delivery log. */
  webhook_deliveries: {
    id: string;
    endpoint_id: string;
    project_id: string;
    event_key: string;
    event_type: string;
    body: string;
    state: ColumnType<string, string | undefined, string>;
    attempts: ColumnType<number, number | undefined, number>;
    next_attempt_at: ColumnType<Date, string, string>;
    lease_until: ColumnType<Date | null, never, string | null>;
    last_status: number | null;
    last_error: string | null;
    created_at: ColumnType<Date, string, never>;
    delivered_at: ColumnType<Date | null, never, string>;
    /** When it was last sent again by hand: its day of retries counts from then. */
    resent_at: ColumnType<Date | null, never, string>;
  };
  /** Sessions created under the project lock that `sessions_view` may not show yet (see project-lock.ts). */
  session_create_reservations: {
    project_id: string;
    session_id: string;
    /** The version the creating or reopening append reached (bigint, read as a string). */
    version: ColumnType<string, number | undefined, number>;
    created_at: ColumnType<Date, string | undefined, never>;
  };
  /** v4 conversations (sessions made through the run API). */
  v4_sessions: {
    session_id: string;
    project_id: string;
    workspace_id: string | null;
    model: string;
    sandbox_ready: boolean;
    latest_run_id: string | null;
    created_at: Timestamp;
    updated_at: Timestamp;
    inbox_email: string | null;
  };
  /** One row per v4 run (a v4 session's task; same id). */
  v4_runs: {
    id: string;
    session_id: string;
    project_id: string;
    task: string;
    title: string | null;
    model: string;
    status: string;
    result: string | null;
    error: string | null;
    /** The judge's verdict (jsonb), for a run created with `judge` that completed. */
    judgement: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
    /** The upload ids the run was created with (jsonb array); null when none. */
    attached_file_ids: ColumnType<string[] | null, string | null | undefined, string | null>;
    attached_files: ColumnType<AttachedFile[] | null, string | null | undefined, string | null>;
    input_tokens: Int8;
    output_tokens: Int8;
    created_at: Timestamp;
    updated_at: Timestamp;
  };
  /** What callers read as a run's events; the id is the session event's stream sequence. */
  v4_run_events: {
    id: Int8;
    run_id: string;
    ts: Timestamp;
    type: string;
    data: ColumnType<Record<string, unknown>, string, string>;
  };
  /** Billing's running totals of each run's ledger (the latest `ChargeRecorded`). */
  v4_run_costs: {
    run_id: string;
    sequence: Int8;
    input_tokens: Int8;
    output_tokens: Int8;
    total_cost_usd: string;
  };
  /** Temporary mailbox addresses (read model): which session each belongs to, and whether it still takes mail. */
  session_mailboxes: {
    address: string;
    session_id: string;
    open: boolean;
  };
  /** Mail the mailboxes received (read model, from `MailReceived`). */
  session_mails: {
    id: string;
    session_id: string;
    sequence: Int8;
    from: string;
    to: string;
    subject: string;
    date: ColumnType<Date | null, string | null, string | null>;
    received_at: Timestamp;
    text: string;
    text_truncated: boolean;
    links: ColumnType<string[], string, string>;
  };
  session_secrets: {
    session_id: string;
    task_id: string;
    iv: Buffer;
    tag: Buffer;
    ciphertext: Buffer;
    created_at: ColumnType<Date, string | undefined, never>;
  };
}
