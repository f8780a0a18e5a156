import type { Projection, StoredEvent } from "@bas/event-store";
import { type Kysely, sql } from "kysely";
import { SESSION_EVENT_TYPES } from "@bas/proto";
import { SESSION_AGGREGATE, type SessionEvent } from "../../domain/events";
import {
  ACTIVE_STATUSES,
  evolve,
  initialState,
  type Session,
  type SessionStatus,
  TERMINAL_STATUSES,
} from "../../domain/state";
import {
  type SessionCosts,
  type SessionPage,
  type SessionQueries,
  type ProjectedSessionRecord,
  ZERO_COSTS,
} from "../../app/ports";
import type { SessionsDb } from "./schema";
import { sessionStatusWebhook } from "../../domain/webhook-events";
import { enqueueWebhook } from "./webhook-store";

/**
 * One row per session holding the aggregate's own fold (the same `evolve`), so a read is one indexed row and can
 * never disagree with the aggregate.
 */
export function sessionsProjection(): Projection<SessionsDb, SessionEvent> {
  return {
    name: "sessions-view",
    aggregateType: SESSION_AGGREGATE,
    // Events of a newer version of this service are skipped rather than blocking the projection.
    canHandle: SESSION_EVENT_TYPES,
    async setup(db) {
      await sql`create table if not exists sessions_view (
        id text primary key,
        project_id text not null,
        status text not null,
        deleted boolean not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        doc json not null)`.execute(db);
      // The status a session had before it ended, shown while its costs are still being priced (see costsPending).
      await sql`alter table sessions_view add column if not exists last_active_status text`.execute(db);
      // v3 reads show only v3 sessions; a v4 conversation is read through its runs.
      await sql`alter table sessions_view add column if not exists api text not null default 'v3'`.execute(db);
      // The stream sequence of the last event applied: how the project lock knows the row shows a reopening.
      await sql`alter table sessions_view add column if not exists version bigint not null default 0`.execute(db);
      await sql`create index if not exists sessions_view_by_project
        on sessions_view (project_id, created_at desc, id desc) where not deleted`.execute(db);
      await sql`create index if not exists sessions_view_inactive
        on sessions_view (updated_at) where not deleted and status in ('created', 'idle')`.execute(db);
    },
    async teardown(db) {
      await sql`drop table if exists sessions_view`.execute(db);
    },
    async apply(trx, event: StoredEvent<SessionEvent>) {
      const row = await trx
        .selectFrom("sessions_view")
        .select("doc")
        .where("id", "=", event.aggregateId)
        .forUpdate()
        .executeTakeFirst();
      const before = row?.doc ?? initialState();
      const next = evolve(before, event);
      if (next.status === "none") return;
      // The status readers saw before this commit began: one commit can pass through a status no reader ever saw
      // (a task's end and the stop of a session without keepAlive: idle, then stopped).
      const commitStarts = (event.commit?.index ?? 0) === 0;
      const lastActive =
        commitStarts && before.status !== "none" && ACTIVE_STATUSES.includes(before.status) ? before.status : undefined;
      const values = {
        id: next.id,
        project_id: next.settings.projectId,
        api: next.api ?? "v3",
        status: next.status,
        ...(lastActive ? { last_active_status: lastActive } : {}),
        deleted: next.deleted,
        created_at: next.createdAt,
        updated_at: next.updatedAt,
        doc: JSON.stringify(next),
        version: event.sequence,
      };
      await trx
        .insertInto("sessions_view")
        .values(values)
        .onConflict((oc) =>
          oc.column("id").doUpdateSet({
            status: values.status,
            ...(lastActive ? { last_active_status: lastActive } : {}),
            deleted: values.deleted,
            updated_at: values.updated_at,
            doc: values.doc,
            version: values.version,
          }),
        )
        .execute();
      const webhook = sessionStatusWebhook(before, next, event);
      if (webhook) await enqueueWebhook(trx, webhook);
    },
  };
}

const costsOf = (row: Record<string, unknown>): SessionCosts =>
  row.total_cost_usd == null
    ? ZERO_COSTS
    : {
        proxyUsedMb: String(row.proxy_used_mb),
        llmCostUsd: String(row.llm_cost_usd),
        proxyCostUsd: String(row.proxy_cost_usd),
        browserCostUsd: String(row.browser_cost_usd),
        totalCostUsd: String(row.total_cost_usd),
      };

/** Lists never carry the screenshot or the recordings: those need signing, which only single reads do. */
const forList = (session: Session): Session => ({ ...session, screenshotRef: null, recordingRefs: [] });

export interface SessionQueriesOptions {
  /** The domain clock (the one `updated_at` is written with). */
  now(): Date;
  /** How long an ended session may wait for its costs to be final before its terminal status shows anyway. */
  finalCostsWaitMs: number;
}

/**
 * The status a caller sees. A session that ended while a browser of its has not had its last usage charged yet
 * (browser-pool stops the browser when it sees the end, then billing prices the browser's last report) still shows
 * the status it had before: a caller that polls until a terminal status and reads the costs once must read final
 * costs. Billing or browser-pool down for longer than `finalCostsWaitMs` does not hide the end for ever.
 */
function shownStatus(
  row: { doc: Session; costs_pending: boolean; last_active_status: string | null; updated_at: Date },
  options: SessionQueriesOptions,
): SessionStatus {
  const status = row.doc.status;
  if (!row.costs_pending || !TERMINAL_STATUSES.includes(status)) return status;
  if (options.now().getTime() - new Date(row.updated_at).getTime() >= options.finalCostsWaitMs) return status;
  return (row.last_active_status as SessionStatus | null) ?? "running";
}

export function createSessionQueries(db: Kysely<SessionsDb>, options: SessionQueriesOptions): SessionQueries {
  const withCosts = () =>
    db
      .selectFrom("sessions_view as s")
      .leftJoin("session_costs as c", "c.session_id", "s.id")
      .select([
        "s.doc",
        "s.updated_at",
        "s.last_active_status",
        "s.version",
        "c.proxy_used_mb",
        "c.llm_cost_usd",
        "c.proxy_cost_usd",
        "c.browser_cost_usd",
        "c.total_cost_usd",
        sql<boolean>`exists (select 1 from session_browsers b where b.session_id = s.id
          and not exists (select 1 from session_browser_final_charges f where f.browser_id = b.browser_id))`.as(
          "costs_pending",
        ),
      ]);

  async function get(projectId: string, sessionId: string): Promise<ProjectedSessionRecord | undefined> {
    const row = await withCosts()
      .where("s.id", "=", sessionId)
      .where("s.project_id", "=", projectId)
      .where("s.api", "=", "v3")
      .where("s.deleted", "=", false)
      .executeTakeFirst();
    if (!row) return undefined;
    return { session: row.doc, status: shownStatus(row, options), costs: costsOf(row), version: Number(row.version) };
  }

  async function list(projectId: string, page: number, pageSize: number): Promise<SessionPage> {
    const [rows, count] = await Promise.all([
      withCosts()
        .where("s.project_id", "=", projectId)
        .where("s.api", "=", "v3")
        .where("s.deleted", "=", false)
        .orderBy("s.created_at", "desc")
        .orderBy("s.id", "desc")
        .limit(pageSize)
        .offset((page - 1) * pageSize)
        .execute(),
      db
        .selectFrom("sessions_view")
        .select((eb) => eb.fn.countAll<string>().as("total"))
        .where("project_id", "=", projectId)
        .where("api", "=", "v3")
        .where("deleted", "=", false)
        .executeTakeFirstOrThrow(),
    ]);
    const records = rows.map((row) => ({
      session: forList(row.doc),
      status: shownStatus(row, options),
      costs: costsOf(row),
    }));
    return { records, total: Number(count.total), page, pageSize };
  }

  async function inactive(before: Date, limit: number): Promise<string[]> {
    const rows = await db
      .selectFrom("sessions_view")
      .select("id")
      .where("deleted", "=", false)
      .where("status", "in", ["created", "idle"])
      .where("updated_at", "<", before)
      .orderBy("updated_at")
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  return { get, list, inactive };
}
