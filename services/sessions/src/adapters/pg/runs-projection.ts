import type { Projection, StoredEvent } from "@bas/event-store";
import { sql, type Transaction } from "kysely";
import { SESSION_AGGREGATE, type SessionEvent } from "../../domain/events";
import { type RunChange, runChangeOf, type RunStatus, TERMINAL_RUN_STATUSES } from "../../domain/run-view";
import type { SessionsDb } from "./schema";
import { runStatusWebhook } from "../../domain/webhook-events";
import { enqueueWebhook } from "./webhook-store";

/**
 * The v4 read model: conversations, their runs, and each run's events, from the events of sessions made through the
 * run API (`api: "v4"`); v3 sessions leave no trace here. A run's status is one row read by its primary key.
 */
export function runsProjection(): Projection<SessionsDb, SessionEvent> {
  return {
    name: "sessions-runs",
    aggregateType: SESSION_AGGREGATE,
    canHandle: [
      "SessionCreated",
      "TaskDispatched",
      "SandboxReady",
      "TaskStarted",
      "StepRecorded",
      "UsageReported",
      "TaskCompleted",
      "TaskFailed",
      "TaskStopped",
      "SessionReopened",
    ],
    async setup(db) {
      await sql`create table if not exists v4_sessions (
        session_id text primary key,
        project_id text not null,
        workspace_id text,
        model text not null,
        sandbox_ready boolean not null,
        latest_run_id text,
        created_at timestamptz not null,
        updated_at timestamptz not null)`.execute(db);
      await sql`alter table v4_sessions add column if not exists inbox_email text`.execute(db);
      await sql`create index if not exists v4_sessions_by_project
        on v4_sessions (project_id, created_at desc, session_id desc)`.execute(db);
      await sql`create table if not exists v4_runs (
        id text primary key,
        session_id text not null,
        project_id text not null,
        task text not null,
        title text,
        model text not null,
        status text not null,
        result text,
        error text,
        input_tokens bigint not null,
        output_tokens bigint not null,
        created_at timestamptz not null,
        updated_at timestamptz not null)`.execute(db);
      await sql`alter table v4_runs add column if not exists judgement jsonb`.execute(db);
      await sql`alter table v4_runs add column if not exists attached_file_ids jsonb`.execute(db);
      await sql`alter table v4_runs add column if not exists attached_files jsonb`.execute(db);
      await sql`create index if not exists v4_runs_by_project
        on v4_runs (project_id, created_at desc, id desc)`.execute(db);
      await sql`create index if not exists v4_runs_by_session
        on v4_runs (session_id, created_at desc, id desc)`.execute(db);
      await sql`create table if not exists v4_run_events (
        id bigint not null,
        run_id text not null,
        ts timestamptz not null,
        type text not null,
        data jsonb not null,
        primary key (run_id, id))`.execute(db);
    },
    async teardown(db) {
      await sql`drop table if exists v4_run_events`.execute(db);
      await sql`drop table if exists v4_runs`.execute(db);
      await sql`drop table if exists v4_sessions`.execute(db);
    },
    async apply(trx, event: StoredEvent<SessionEvent>) {
      if (event.type === "SessionCreated") {
        if (event.data.api !== "v4") return;
        await trx
          .insertInto("v4_sessions")
          .values({
            session_id: event.aggregateId,
            project_id: event.data.projectId,
            workspace_id: event.data.workspaceId,
            model: event.data.model,
            sandbox_ready: false,
            latest_run_id: null,
            created_at: event.occurredAt,
            updated_at: event.occurredAt,
            inbox_email: event.data.inboxEmail ?? null,
          })
          .onConflict((oc) => oc.column("session_id").doNothing())
          .execute();
        return;
      }
      const session = await trx
        .selectFrom("v4_sessions as s")
        .leftJoin("v4_runs as r", "r.id", "s.latest_run_id")
        .select(["s.project_id", "s.model", "s.sandbox_ready", "s.latest_run_id", "r.status"])
        .where("s.session_id", "=", event.aggregateId)
        .forUpdate("s")
        .executeTakeFirst();
      if (!session) return;
      const current = session.latest_run_id ? { id: session.latest_run_id, status: session.status as RunStatus } : null;
      const change = runChangeOf(event, current, session.sandbox_ready);
      const sessionUpdate = {
        updated_at: event.occurredAt,
        ...(event.type === "SandboxReady" ? { sandbox_ready: true } : {}),
        // A new browser comes: the next run waits for it (queued).
        ...(event.type === "SessionReopened" ? { sandbox_ready: false } : {}),
        ...(event.type === "TaskDispatched" ? { latest_run_id: event.data.taskId } : {}),
      };
      await trx.updateTable("v4_sessions").set(sessionUpdate).where("session_id", "=", event.aggregateId).execute();
      if (!change) return;
      const run = { id: change.runId, sessionId: event.aggregateId, projectId: session.project_id };
      if (change.status && (await statusChanges(trx, change.runId, change.status))) {
        await enqueueWebhook(trx, runStatusWebhook(run, change.status, event));
      }
      if (event.type === "TaskDispatched") {
        await trx
          .insertInto("v4_runs")
          .values({
            id: event.data.taskId,
            session_id: event.aggregateId,
            project_id: session.project_id,
            task: event.data.task,
            title: null,
            model: session.model,
            status: change.status ?? "queued",
            result: null,
            error: null,
            attached_file_ids: event.data.attachedFiles?.length
              ? JSON.stringify(event.data.attachedFiles.map((f) => f.id))
              : null,
            attached_files: event.data.attachedFiles?.length ? JSON.stringify(event.data.attachedFiles) : null,
            input_tokens: 0,
            output_tokens: 0,
            created_at: event.occurredAt,
            updated_at: event.occurredAt,
          })
          .onConflict((oc) => oc.column("id").doNothing())
          .execute();
      } else {
        await updateRun(trx, change, event.occurredAt);
      }
      if (change.event) {
        await trx
          .insertInto("v4_run_events")
          .values({
            id: event.sequence,
            run_id: change.runId,
            ts: event.occurredAt,
            type: change.event.type,
            data: JSON.stringify(change.event.data),
          })
          .onConflict((oc) => oc.columns(["run_id", "id"]).doNothing())
          .execute();
      }
    },
  };
}

/** Whether `status` is news for the run: it has none yet (being created), or another one that has not ended. */
async function statusChanges(trx: Transaction<SessionsDb>, runId: string, status: RunStatus): Promise<boolean> {
  const row = await trx.selectFrom("v4_runs").select("status").where("id", "=", runId).executeTakeFirst();
  return !row || (row.status !== status && !TERMINAL_RUN_STATUSES.includes(row.status as RunStatus));
}

async function updateRun(trx: Transaction<SessionsDb>, change: RunChange, at: string) {
  const { tokens } = change;
  let update = trx
    .updateTable("v4_runs")
    .set({
      updated_at: at,
      ...(change.status ? { status: change.status } : {}),
      ...(change.title !== undefined ? { title: change.title } : {}),
      ...(change.result !== undefined ? { result: change.result } : {}),
      ...(change.error !== undefined ? { error: change.error } : {}),
      ...(change.judgement !== undefined ? { judgement: JSON.stringify(change.judgement) } : {}),
      ...(tokens?.replace ? { input_tokens: tokens.input, output_tokens: tokens.output } : {}),
      ...(tokens && !tokens.replace
        ? {
            input_tokens: sql<number>`input_tokens + ${tokens.input}`,
            output_tokens: sql<number>`output_tokens + ${tokens.output}`,
          }
        : {}),
    })
    .where("id", "=", change.runId);
  // A terminal run never changes again; a late usage report still counts (tokens are facts).
  if (!tokens) update = update.where("status", "not in", TERMINAL_RUN_STATUSES);
  await update.execute();
}
