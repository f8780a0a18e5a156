import type { Projection, StoredEvent } from "@bas/event-store";
import { type Kysely, sql } from "kysely";
import { SESSION_AGGREGATE, type SessionEvent, type SessionEventType } from "../../domain/events";
import { ACTIVE_STATUSES, evolve, initialState, type Session } from "../../domain/state";
import {
  type SessionCosts,
  type SessionPage,
  type SessionQueries,
  type SessionRecord,
  ZERO_COSTS,
} from "../../app/ports";
import type { SessionsDb } from "./schema";

const KNOWN: ReadonlySet<SessionEventType> = new Set<SessionEventType>([
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
]);

/**
 * One row per session holding the aggregate's own fold (the same `evolve`), so a read is one indexed row and can
 * never disagree with the aggregate.
 */
export const sessionsProjection: Projection<SessionsDb, SessionEvent> = {
  name: "sessions-view",
  aggregateType: SESSION_AGGREGATE,
  async setup(db) {
    await sql`create table if not exists sessions_view (
      id text primary key,
      project_id text not null,
      status text not null,
      deleted boolean not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      doc json not null)`.execute(db);
    await sql`create index if not exists sessions_view_by_project
      on sessions_view (project_id, created_at desc, id desc) where not deleted`.execute(db);
    await sql`create index if not exists sessions_view_inactive
      on sessions_view (updated_at) where not deleted and status in ('created', 'idle')`.execute(db);
  },
  async teardown(db) {
    await sql`drop table if exists sessions_view`.execute(db);
  },
  async apply(trx, event: StoredEvent<SessionEvent>) {
    // Events of a newer version of this service are skipped rather than blocking the projection.
    if (!KNOWN.has(event.type)) return;
    const row = await trx
      .selectFrom("sessions_view")
      .select("doc")
      .where("id", "=", event.aggregateId)
      .forUpdate()
      .executeTakeFirst();
    const next = evolve(row?.doc ?? initialState(), event);
    if (next.status === "none") return;
    const values = {
      id: next.id,
      project_id: next.settings.projectId,
      status: next.status,
      deleted: next.deleted,
      created_at: next.createdAt,
      updated_at: next.updatedAt,
      doc: JSON.stringify(next),
    };
    await trx
      .insertInto("sessions_view")
      .values(values)
      .onConflict((oc) =>
        oc.column("id").doUpdateSet({
          status: values.status,
          deleted: values.deleted,
          updated_at: values.updated_at,
          doc: values.doc,
        }),
      )
      .execute();
  },
};

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

export function createSessionQueries(db: Kysely<SessionsDb>): SessionQueries {
  const withCosts = () =>
    db
      .selectFrom("sessions_view as s")
      .leftJoin("session_costs as c", "c.session_id", "s.id")
      .select([
        "s.doc",
        "c.proxy_used_mb",
        "c.llm_cost_usd",
        "c.proxy_cost_usd",
        "c.browser_cost_usd",
        "c.total_cost_usd",
      ]);

  async function get(projectId: string, sessionId: string): Promise<SessionRecord | undefined> {
    const row = await withCosts()
      .where("s.id", "=", sessionId)
      .where("s.project_id", "=", projectId)
      .where("s.deleted", "=", false)
      .executeTakeFirst();
    return row ? { session: row.doc, costs: costsOf(row) } : undefined;
  }

  async function list(projectId: string, page: number, pageSize: number): Promise<SessionPage> {
    const [rows, count] = await Promise.all([
      withCosts()
        .where("s.project_id", "=", projectId)
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
        .where("deleted", "=", false)
        .executeTakeFirstOrThrow(),
    ]);
    const records = rows.map((row) => ({ session: forList(row.doc), costs: costsOf(row) }));
    return { records, total: Number(count.total), page, pageSize };
  }

  async function countActive(projectId: string): Promise<number> {
    const row = await db
      .selectFrom("sessions_view")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("project_id", "=", projectId)
      .where("deleted", "=", false)
      .where("status", "in", [...ACTIVE_STATUSES])
      .executeTakeFirstOrThrow();
    return Number(row.n);
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

  return { get, list, countActive, inactive };
}
