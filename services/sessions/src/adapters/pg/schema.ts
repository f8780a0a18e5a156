import type { ColumnType } from "kysely";
import type { Session } from "../../domain/state";

/** Bigints come back from pg as strings; we write numbers. */
type Int8 = ColumnType<string, number, number>;
type Timestamp = ColumnType<Date, string, string>;

/** The sessions service's tables. Read models are rebuilt from the stream; `session_secrets` is source data. */
export interface SessionsDb {
  sessions_view: {
    id: string;
    project_id: string;
    status: string;
    deleted: boolean;
    created_at: Timestamp;
    updated_at: Timestamp;
    /** The folded aggregate state (json, not jsonb: the agent's output keeps its key order). */
    doc: ColumnType<Session, string, string>;
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
  session_secrets: {
    session_id: string;
    task_id: string;
    iv: Buffer;
    tag: Buffer;
    ciphertext: Buffer;
    created_at: ColumnType<Date, string | undefined, never>;
  };
}
