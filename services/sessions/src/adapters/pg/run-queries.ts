import { type Kysely, sql } from "kysely";
import { emptyQueue, type MessageQueue } from "../../domain/queue";
import { type RunStatus, shownRunStatus, TERMINAL_RUN_STATUSES } from "../../domain/run-view";
import type { ConversationRecord, KeysetPage, RunQueries, RunRecord } from "../../app/ports";
import { decodeCursor, encodeCursor, type Keyset } from "./keyset-cursor";
import type { SessionsDb } from "./schema";

export interface RunQueriesOptions {
  /** The domain clock (the one `updated_at` is written with). */
  now(): Date;
  /** How long an ended run may wait for its costs to be final before its terminal status shows anyway. */
  finalCostsWaitMs: number;
}

/** A newest-first page from `limit + 1` rows: the extra row only says that more follow. */
function pageOf<T>(rows: T[], limit: number, keyOf: (row: T) => Keyset): KeysetPage<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const hasMore = rows.length > limit && last !== undefined;
  return { items, hasMore, nextCursor: hasMore ? encodeCursor(keyOf(last)) : null };
}

/** What a run's shown status is made of: its own status and tokens, and what billing has charged of them. */
const STATUS_COLUMNS = [
  "r.status",
  "r.input_tokens",
  "r.output_tokens",
  "c.input_tokens as charged_input",
  "c.output_tokens as charged_output",
] as const;

export function createRunQueries(db: Kysely<SessionsDb>, options: RunQueriesOptions): RunQueries {
  const shown = (row: {
    status: string;
    input_tokens: string;
    output_tokens: string;
    charged_input: string | null;
    charged_output: string | null;
    updated_at: Date;
  }) =>
    shownRunStatus(
      {
        status: row.status as RunStatus,
        reportedTokens: Number(row.input_tokens) + Number(row.output_tokens),
        chargedTokens: Number(row.charged_input ?? 0) + Number(row.charged_output ?? 0),
        updatedAt: new Date(row.updated_at),
      },
      options.now(),
      options.finalCostsWaitMs,
    );

  const runs = () =>
    db
      .selectFrom("v4_runs as r")
      .innerJoin("v4_sessions as s", "s.session_id", "r.session_id")
      .leftJoin("v4_run_costs as c", "c.run_id", "r.id")
      .select([
        "r.id",
        "r.session_id",
        "s.workspace_id",
        "r.task",
        "r.title",
        "r.model",
        "r.result",
        "r.error",
        "r.judgement",
        "r.attached_file_ids",
        "r.attached_files",
        "r.created_at",
        "r.updated_at",
        "c.total_cost_usd",
        ...STATUS_COLUMNS,
      ]);

  type RunRow = Awaited<ReturnType<ReturnType<typeof runs>["executeTakeFirstOrThrow"]>>;
  const recordOf = (row: RunRow): RunRecord => ({
    id: row.id,
    sessionId: row.session_id,
    workspaceId: row.workspace_id,
    task: row.task,
    title: row.title,
    model: row.model,
    status: shown(row),
    result: row.result,
    error: row.error,
    judgement: row.judgement,
    attachedFileIds: row.attached_file_ids,
    attachments: row.attached_files ?? [],
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    totalCostUsd: row.total_cost_usd ?? "0",
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  });

  return {
    async status(projectId, runId) {
      // Two primary-key lookups and nothing else: this is what callers poll.
      const row = await db
        .selectFrom("v4_runs as r")
        .leftJoin("v4_run_costs as c", "c.run_id", "r.id")
        .select(["r.session_id", "r.updated_at", ...STATUS_COLUMNS])
        .where("r.id", "=", runId)
        .where("r.project_id", "=", projectId)
        .executeTakeFirst();
      if (!row) return undefined;
      const status = shown(row);
      return { status, sessionId: row.session_id, awaitingCosts: status !== row.status };
    },

    async get(projectId, runId) {
      const row = await runs().where("r.id", "=", runId).where("r.project_id", "=", projectId).executeTakeFirst();
      return row ? recordOf(row) : undefined;
    },

    async list(projectId, page) {
      let query = runs().where("r.project_id", "=", projectId);
      if (page.sessionId) query = query.where("r.session_id", "=", page.sessionId);
      if (page.cursor) {
        const key = decodeCursor(page.cursor);
        query = query.where(sql<boolean>`(r.created_at, r.id) < (${key.at.toISOString()}::timestamptz, ${key.id})`);
      }
      const rows = await query
        .orderBy("r.created_at", "desc")
        .orderBy("r.id", "desc")
        .limit(page.limit + 1)
        .execute();
      return pageOf(rows.map(recordOf), page.limit, (run) => ({ at: run.createdAt, id: run.id }));
    },

    async events(runId, after, limit) {
      // The status first, the events after: a run seen ended wrote its last event in the same transaction, so the
      // second read has it. (Read together, or the other way round, a run could be seen ended without it.)
      const run = await db.selectFrom("v4_runs").select("status").where("id", "=", runId).executeTakeFirst();
      const rows = await db
        .selectFrom("v4_run_events")
        .selectAll()
        .where("run_id", "=", runId)
        .where("id", ">", String(after))
        .orderBy("id")
        .limit(limit + 1)
        .execute();
      const events = rows.slice(0, limit).map((r) => ({
        id: Number(r.id),
        runId: r.run_id,
        ts: new Date(r.ts),
        type: r.type,
        data: r.data,
      }));
      const complete = !!run && TERMINAL_RUN_STATUSES.includes(run.status as RunStatus);
      return { events, hasMore: rows.length > limit, complete };
    },

    async conversation(projectId, sessionId) {
      const row = await conversations()
        .where("s.session_id", "=", sessionId)
        .where("s.project_id", "=", projectId)
        .executeTakeFirst();
      return row ? conversationOf(row) : undefined;
    },

    async conversations(projectId, page) {
      let query = conversations().where("s.project_id", "=", projectId);
      if (page.cursor) {
        const key = decodeCursor(page.cursor);
        query = query.where(
          sql<boolean>`(s.created_at, s.session_id) < (${key.at.toISOString()}::timestamptz, ${key.id})`,
        );
      }
      const rows = await query
        .orderBy("s.created_at", "desc")
        .orderBy("s.session_id", "desc")
        .limit(page.limit + 1)
        .execute();
      return pageOf(rows.map(conversationOf), page.limit, (c) => ({ at: c.createdAt, id: c.sessionId }));
    },

    async sessionOfRun(runId) {
      const row = await db.selectFrom("v4_runs").select("session_id").where("id", "=", runId).executeTakeFirst();
      return row?.session_id;
    },

    async queue(projectId, sessionId) {
      // The session's own fold (sessions_view) holds its queue: one row by primary key.
      const row = await db
        .selectFrom("sessions_view")
        .select(sql<MessageQueue | null>`doc->'queue'`.as("queue"))
        .where("id", "=", sessionId)
        .where("project_id", "=", projectId)
        .where("api", "=", "v4")
        .where("deleted", "=", false)
        .executeTakeFirst();
      return row ? (row.queue ?? emptyQueue()) : undefined;
    },
  };

  function conversations() {
    return db
      .selectFrom("v4_sessions as s")
      .innerJoin("v4_runs as r", "r.id", "s.latest_run_id")
      .leftJoin("v4_run_costs as c", "c.run_id", "r.id")
      .select([
        "s.session_id",
        "s.workspace_id",
        "s.latest_run_id",
        "s.created_at",
        "s.updated_at",
        "s.inbox_email",
        "r.task",
        "r.title",
        "r.updated_at as run_updated_at",
        ...STATUS_COLUMNS,
      ]);
  }

  function conversationOf(row: Awaited<ReturnType<ReturnType<typeof conversations>["executeTakeFirstOrThrow"]>>) {
    const record: ConversationRecord = {
      sessionId: row.session_id,
      workspaceId: row.workspace_id,
      latestRunId: row.latest_run_id ?? "",
      task: row.task,
      title: row.title,
      status: shown({ ...row, updated_at: row.run_updated_at }),
      createdAt: new Date(row.created_at),
      updatedAt: new Date(row.updated_at),
      inboxEmail: row.inbox_email,
    };
    return record;
  }
}
