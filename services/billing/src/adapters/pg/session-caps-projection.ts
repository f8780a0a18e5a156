import type { Projection, StoredEvent } from "@bas/event-store";
import { SESSION_AGGREGATE, type SessionEventType, sessions } from "@bas/proto";
import type { Kysely, Transaction } from "kysely";
import type { SessionCap } from "../../app/ports";
import type { BillingTables } from "./migrations";

/**
 * Learns each session's cap from the sessions service's events (`SessionCreated` carries the project and
 * `maxCostUsd`; `TaskDispatched` starts a task under it) and hands it to `onCap`, which records it on the session's
 * ledger. Keeps one row per session so a dispatch, which does not repeat the cap, can find it.
 */
export function sessionCapsProjection(
  onCap: (cap: SessionCap) => Promise<void>,
  name = "billing_session_caps",
): Projection<BillingTables> {
  return {
    name,
    aggregateType: SESSION_AGGREGATE,
    canHandle: ["SessionCreated", "TaskDispatched"] satisfies SessionEventType[],
    async setup(db: Kysely<BillingTables>) {
      await db.schema
        .createTable("billing_session_caps")
        .ifNotExists()
        .addColumn("session_id", "text", (c) => c.primaryKey())
        .addColumn("project_id", "text", (c) => c.notNull())
        .addColumn("max_cost_usd", "text")
        .execute();
    },
    async teardown(db: Kysely<BillingTables>) {
      await db.schema.dropTable("billing_session_caps").ifExists().execute();
    },
    async apply(trx: Transaction<BillingTables>, event: StoredEvent) {
      const sessionId = event.aggregateId;
      if (event.type === "SessionCreated") {
        const { projectId, maxCostUsd: cap } = sessions.SessionCreated.fromJSON(event.data);
        if (!projectId) return;
        const maxCostUsd = cap ?? null;
        await trx
          .insertInto("billing_session_caps")
          .values({ session_id: sessionId, project_id: projectId, max_cost_usd: maxCostUsd })
          .onConflict((oc) => oc.column("session_id").doUpdateSet({ project_id: projectId, max_cost_usd: maxCostUsd }))
          .execute();
        await onCap({ sessionId, projectId, maxCostUsd });
      } else {
        const { taskId } = sessions.TaskDispatched.fromJSON(event.data);
        if (!taskId) return;
        const row = await trx
          .selectFrom("billing_session_caps")
          .selectAll()
          .where("session_id", "=", sessionId)
          .executeTakeFirst();
        if (!row) return;
        await onCap({ sessionId, projectId: row.project_id, maxCostUsd: row.max_cost_usd, taskId });
      }
    },
  };
}
