import type { Projection, StoredEvent } from "@bas/event-store";
import { type Generated, type Kysely, type Selectable, sql } from "kysely";
import { BROWSER_AGGREGATE, type BrowserEvent, type BrowserHandle } from "../../domain/events";
import type { BrowserSettings } from "../../domain/browser-settings";
import type { BrowserView } from "../../domain/browser-view";
import { liveUrlFor } from "../../domain/cdp-route";
import type { BrowserListFilter, BrowserReadModel, BrowserRecord } from "../../app/ports";
import { COSTS_TABLE, type CostsTable } from "./browser-costs-projection";
import { createDownloadsTable, DOWNLOADS_TABLE, insertDownload, listDownloads } from "./downloads-table";

export const BROWSERS_TABLE = "browser_pool_browsers";

export interface BrowsersTable {
  id: string;
  project_id: string;
  session_id: string | null;
  /** requested → active → stopped; a requested browser is still launching. */
  status: "requested" | "active" | "stopped";
  node_id: string;
  settings: BrowserSettings;
  metadata: Record<string, string>;
  timeout_minutes: number;
  timeout_at: Date;
  cdp_url: string;
  cdp_secret: string;
  handle: BrowserHandle | null;
  requested_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  stop_reason: string | null;
  stop_detail: string | null;
  cdp_bytes_in: Generated<string>;
  cdp_bytes_out: Generated<string>;
  recording_ref: string | null;
}

export interface BrowserPoolDb {
  [BROWSERS_TABLE]: BrowsersTable;
  [COSTS_TABLE]: CostsTable;
}

type BrowserRecordRow = Selectable<BrowsersTable>;

type BrowserRow = BrowserRecordRow & {
  proxy_used_mb: string | null;
  proxy_cost_usd: string | null;
  browser_cost_usd: string | null;
};

/** The browser read model: one row per browser, written only from `browser` events. */
export function browsersProjection(name = "browser_pool_browsers"): Projection<BrowserPoolDb, BrowserEvent> {
  return {
    name,
    aggregateType: BROWSER_AGGREGATE,
    canHandle: [
      "BrowserRequested",
      "BrowserStarted",
      "BrowserStopped",
      "BrowserRecordingSaved",
      "BrowserFileDownloaded",
    ],
    async setup(db) {
      await sql`create table if not exists ${sql.table(BROWSERS_TABLE)} (
        id text primary key,
        project_id text not null,
        session_id text,
        status text not null,
        node_id text not null,
        settings jsonb not null,
        metadata jsonb not null,
        timeout_minutes int not null,
        timeout_at timestamptz not null,
        cdp_url text not null,
        cdp_secret text not null,
        handle jsonb,
        requested_at timestamptz not null,
        started_at timestamptz,
        finished_at timestamptz,
        stop_reason text,
        stop_detail text,
        cdp_bytes_in bigint not null default 0,
        cdp_bytes_out bigint not null default 0)`.execute(db);
      // Added with recordings; a table made before them gains the column.
      await sql`alter table ${sql.table(BROWSERS_TABLE)} add column if not exists recording_ref text`.execute(db);
      await createDownloadsTable(db);
      await sql`create index if not exists browser_pool_browsers_project
        on ${sql.table(BROWSERS_TABLE)} (project_id, requested_at desc, id)`.execute(db);
      await sql`create index if not exists browser_pool_browsers_session
        on ${sql.table(BROWSERS_TABLE)} (session_id) where session_id is not null`.execute(db);
      await sql`create index if not exists browser_pool_browsers_live
        on ${sql.table(BROWSERS_TABLE)} (node_id, project_id) where status <> 'stopped'`.execute(db);
    },
    async teardown(db) {
      await sql`drop table if exists ${sql.table(BROWSERS_TABLE)}`.execute(db);
      await sql`drop table if exists ${sql.table(DOWNLOADS_TABLE)}`.execute(db);
    },
    async apply(trx, event: StoredEvent<BrowserEvent>) {
      const at = new Date(event.occurredAt);
      switch (event.type) {
        case "BrowserRequested": {
          const d = event.data;
          await trx
            .insertInto(BROWSERS_TABLE)
            .values({
              id: event.aggregateId,
              project_id: d.projectId,
              session_id: d.sessionId,
              status: "requested",
              node_id: d.nodeId,
              settings: JSON.stringify(d.settings) as never,
              metadata: JSON.stringify(d.metadata) as never,
              timeout_minutes: d.timeoutMinutes,
              timeout_at: new Date(d.timeoutAt),
              cdp_url: d.cdpUrl,
              cdp_secret: d.cdpSecret,
              requested_at: at,
            })
            .onConflict((oc) => oc.column("id").doNothing())
            .execute();
          return;
        }
        case "BrowserStarted":
          await trx
            .updateTable(BROWSERS_TABLE)
            .set({ status: "active", started_at: at, handle: JSON.stringify(event.data.handle) as never })
            .where("id", "=", event.aggregateId)
            .where("status", "=", "requested")
            .execute();
          return;
        case "BrowserStopped":
          await trx
            .updateTable(BROWSERS_TABLE)
            .set({
              status: "stopped",
              finished_at: at,
              stop_reason: event.data.reason,
              stop_detail: event.data.detail,
              cdp_bytes_in: String(event.data.cdpBytesIn),
              cdp_bytes_out: String(event.data.cdpBytesOut),
            })
            .where("id", "=", event.aggregateId)
            .where("status", "<>", "stopped")
            .execute();
          return;
        case "BrowserRecordingSaved":
          await trx
            .updateTable(BROWSERS_TABLE)
            .set({ recording_ref: event.data.ref })
            .where("id", "=", event.aggregateId)
            .execute();
          return;
        case "BrowserFileDownloaded":
          await insertDownload(trx, event);
          return;
      }
    },
  };
}

function withCosts(db: Kysely<BrowserPoolDb>) {
  return db
    .selectFrom(BROWSERS_TABLE)
    .leftJoin(COSTS_TABLE, `${COSTS_TABLE}.browser_id`, `${BROWSERS_TABLE}.id`)
    .selectAll(BROWSERS_TABLE)
    .select([`${COSTS_TABLE}.proxy_used_mb`, `${COSTS_TABLE}.proxy_cost_usd`, `${COSTS_TABLE}.browser_cost_usd`]);
}

/** One browser of a project; another project's browser is as absent as a missing one. */
async function findBrowser(
  db: Kysely<BrowserPoolDb>,
  projectId: string,
  browserId: string,
): Promise<BrowserRow | undefined> {
  return withCosts(db)
    .where(`${BROWSERS_TABLE}.id`, "=", browserId)
    .where(`${BROWSERS_TABLE}.project_id`, "=", projectId)
    .executeTakeFirst();
}

/** A project's browsers, newest first, those `filter` names. */
async function listBrowsers(
  db: Kysely<BrowserPoolDb>,
  projectId: string,
  page: { number: number; size: number },
  filter: BrowserListFilter,
): Promise<{ rows: BrowserRow[]; total: number }> {
  const column = (name: string) => sql.ref(`${BROWSERS_TABLE}.${name}`);
  const status = filter.status ?? null;
  const sessionId = filter.sessionId ?? null;
  // The view shows every status but "stopped" as "active".
  const chosen = sql<boolean>`(${column("project_id")} = ${projectId}
    and (${status}::text is null or (${column("status")} = 'stopped') = (${status}::text = 'stopped'))
    and (${sessionId}::text is null or ${column("session_id")} = ${sessionId}))`;
  const [rows, count] = await Promise.all([
    withCosts(db)
      .where(chosen)
      .orderBy(`${BROWSERS_TABLE}.requested_at`, "desc")
      .orderBy(`${BROWSERS_TABLE}.id`, "desc")
      .limit(page.size)
      .offset((page.number - 1) * page.size)
      .execute(),
    db
      .selectFrom(BROWSERS_TABLE)
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where(chosen)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** Every browser a node launched that is not recorded as stopped: what a restart must adopt or close. */
async function liveOnNode(db: Kysely<BrowserPoolDb>, nodeId: string): Promise<BrowserRecordRow[]> {
  return db
    .selectFrom(BROWSERS_TABLE)
    .selectAll()
    .where("node_id", "=", nodeId)
    .where("status", "<>", "stopped")
    .execute();
}

/** The newest browser of a session, whatever its status. */
async function latestForSession(db: Kysely<BrowserPoolDb>, sessionId: string): Promise<BrowserRow | undefined> {
  return withCosts(db)
    .where(`${BROWSERS_TABLE}.session_id`, "=", sessionId)
    .orderBy(`${BROWSERS_TABLE}.requested_at`, "desc")
    .executeTakeFirst();
}

/** The view of a read-model row. */
function viewFromRow(row: BrowserRow): BrowserView {
  return {
    id: row.id,
    projectId: row.project_id,
    status: row.status === "stopped" ? "stopped" : "active",
    cdpUrl: row.cdp_url,
    liveUrl: liveUrlFor(row.cdp_url) ?? null,
    timeoutAt: row.timeout_at,
    startedAt: row.started_at ?? row.requested_at,
    finishedAt: row.finished_at,
    proxyUsedMb: row.proxy_used_mb ?? "0",
    proxyCost: row.proxy_cost_usd ?? "0",
    browserCost: row.browser_cost_usd ?? "0",
    agentSessionId: row.session_id,
    recordingRef: row.recording_ref,
    metadata: row.metadata,
    stopReason: row.stop_reason,
    settings: row.settings,
  };
}

function recordFromRow(row: BrowserRecordRow): BrowserRecord {
  return {
    id: row.id,
    projectId: row.project_id,
    sessionId: row.session_id,
    status: row.status,
    nodeId: row.node_id,
    settings: row.settings,
    handle: row.handle,
    cdpUrl: row.cdp_url,
    cdpSecret: row.cdp_secret,
    timeoutAt: row.timeout_at,
    requestedAt: row.requested_at,
    startedAt: row.started_at,
  };
}

/** The read model as the app sees it: records and views, never rows. */
export function createBrowserReadModel(db: Kysely<BrowserPoolDb>): BrowserReadModel {
  return {
    async find(projectId, browserId) {
      const row = await findBrowser(db, projectId, browserId);
      return row && viewFromRow(row);
    },
    async list(projectId, page, filter = {}) {
      const { rows, total } = await listBrowsers(db, projectId, page, filter);
      return { views: rows.map(viewFromRow), total };
    },
    liveOnNode: async (nodeId) => (await liveOnNode(db, nodeId)).map(recordFromRow),
    async stoppedAmong(ids) {
      if (ids.length === 0) return [];
      const rows = await db
        .selectFrom(BROWSERS_TABLE)
        .select("id")
        .where("id", "in", [...ids])
        .where("status", "=", "stopped")
        .execute();
      return rows.map((row) => row.id);
    },
    async latestForSession(sessionId) {
      const row = await latestForSession(db, sessionId);
      return row && { view: viewFromRow(row), cdpSecret: row.cdp_secret };
    },
    downloads: (browserId, page) => listDownloads(db, browserId, page),
  };
}
