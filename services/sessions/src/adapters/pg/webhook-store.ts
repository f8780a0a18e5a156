import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from "node:crypto";
import { type Kysely, type Migration, sql, type Transaction } from "kysely";
import type { DueDelivery, WebhookDeliveryRecord, WebhookEndpointRecord, WebhookStore } from "../../app/ports";
import { type WebhookEvent, webhookBody } from "../../domain/webhook-events";
import type { SessionsDb } from "./schema";

/** Endpoints and deliveries are source data (an endpoint is what a caller registered): migrated, never rebuilt. */
export const webhookMigrations: Record<string, Migration> = {
  "003_webhooks": {
    async up(db) {
      await sql`create table webhook_endpoints (
        id text primary key,
        project_id text not null,
        url text not null,
        iv bytea not null,
        tag bytea not null,
        sealed_secret bytea not null,
        created_at timestamptz not null,
        deleted_at timestamptz)`.execute(db);
      await sql`create index webhook_endpoints_by_project on webhook_endpoints (project_id) where deleted_at is null`.execute(
        db,
      );
      await sql`create table webhook_deliveries (
        id text primary key,
        endpoint_id text not null,
        project_id text not null,
        event_key text not null,
        event_type text not null,
        body text not null,
        state text not null default 'pending',
        attempts int not null default 0,
        next_attempt_at timestamptz not null,
        lease_until timestamptz,
        last_status int,
        last_error text,
        created_at timestamptz not null,
        delivered_at timestamptz,
        unique (endpoint_id, event_key))`.execute(db);
      await sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where state = 'pending'`.execute(
        db,
      );
      await sql`create index webhook_deliveries_by_endpoint on webhook_deliveries (endpoint_id, created_at desc)`.execute(
        db,
      );
    },
  },
};

/**
 * A webhook event becomes one delivery per endpoint its project had when the event happened, in the transaction of
 * the read model that saw the change (a transactional outbox). Replays (a rebuild) find their rows there already.
 */
export async function enqueueWebhook(trx: Transaction<SessionsDb>, event: WebhookEvent): Promise<void> {
  const body = webhookBody(event);
  await sql`insert into webhook_deliveries
      (id, endpoint_id, project_id, event_key, event_type, body, next_attempt_at, created_at)
    select gen_random_uuid()::text, e.id, e.project_id, ${event.key}, ${event.type}, ${body}, now(), now()
    from webhook_endpoints e
    where e.project_id = ${event.projectId} and e.deleted_at is null and e.created_at <= ${event.occurredAt}::timestamptz
    on conflict (endpoint_id, event_key) do nothing`.execute(trx);
}

export function createWebhookStore(db: Kysely<SessionsDb>, key: Buffer): WebhookStore {
  const aad = (id: string) => Buffer.from(`webhook/${id}`);
  const seal = (id: string, secret: string) => {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(aad(id));
    const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
    return { iv, tag: cipher.getAuthTag(), sealed_secret: sealed };
  };
  const open = (row: { id: string; iv: Buffer; tag: Buffer; sealed_secret: Buffer }) => {
    const decipher = createDecipheriv("aes-256-gcm", key, row.iv);
    decipher.setAAD(aad(row.id));
    decipher.setAuthTag(row.tag);
    return Buffer.concat([decipher.update(row.sealed_secret), decipher.final()]).toString("utf8");
  };
  const endpointOf = (r: { id: string; url: string; created_at: Date }): WebhookEndpointRecord => ({
    id: r.id,
    url: r.url,
    createdAt: new Date(r.created_at),
  });

  return {
    async createEndpoint(projectId, url, secret, test) {
      const id = randomUUID();
      const createdAt = new Date().toISOString();
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto("webhook_endpoints")
          .values({ id, project_id: projectId, url, created_at: createdAt, ...seal(id, secret) })
          .execute();
        // The test ping: the first thing the endpoint gets, so its owner sees it works (or why not).
        await enqueueWebhook(trx, { ...test, key: `${test.key}/${id}`, projectId, occurredAt: createdAt });
      });
      return { id, url, createdAt: new Date(createdAt) };
    },

    async listEndpoints(projectId) {
      const rows = await db
        .selectFrom("webhook_endpoints")
        .select(["id", "url", "created_at"])
        .where("project_id", "=", projectId)
        .where("deleted_at", "is", null)
        .orderBy("created_at")
        .execute();
      return rows.map(endpointOf);
    },

    async deleteEndpoint(projectId, endpointId) {
      return db.transaction().execute(async (trx) => {
        const deleted = await trx
          .updateTable("webhook_endpoints")
          .set({ deleted_at: new Date().toISOString() })
          .where("id", "=", endpointId)
          .where("project_id", "=", projectId)
          .where("deleted_at", "is", null)
          .executeTakeFirst();
        if (Number(deleted.numUpdatedRows) === 0) return false;
        await trx
          .updateTable("webhook_deliveries")
          .set({ state: "failed", last_error: "the endpoint was deleted" })
          .where("endpoint_id", "=", endpointId)
          .where("state", "=", "pending")
          .execute();
        return true;
      });
    },

    async listDeliveries(projectId, endpointId, limit) {
      const owned = await db
        .selectFrom("webhook_endpoints")
        .select("id")
        .where("id", "=", endpointId)
        .where("project_id", "=", projectId)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      if (!owned) return undefined;
      const rows = await db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("endpoint_id", "=", endpointId)
        .orderBy("created_at", "desc")
        .orderBy("id")
        .limit(limit)
        .execute();
      return rows.map(
        (r): WebhookDeliveryRecord => ({
          id: r.id,
          eventType: r.event_type,
          state: r.state as WebhookDeliveryRecord["state"],
          attempts: r.attempts,
          lastStatus: r.last_status,
          lastError: r.last_error,
          createdAt: new Date(r.created_at),
          nextAttemptAt: r.state === "pending" ? new Date(r.next_attempt_at) : null,
          deliveredAt: r.delivered_at ? new Date(r.delivered_at) : null,
          body: r.body,
        }),
      );
    },

    async claimDue(limit, leaseMs) {
      // Leased, not locked: the POST happens outside any transaction, and another replica skips what is leased.
      const { rows } = await sql<{
        id: string;
        body: string;
        attempts: number;
        created_at: Date;
        url: string;
        endpoint_id: string;
        iv: Buffer;
        tag: Buffer;
        sealed_secret: Buffer;
      }>`update webhook_deliveries d
          set lease_until = now() + ${`${leaseMs} milliseconds`}::interval
        from webhook_endpoints e
        where d.id in (
            select id from webhook_deliveries
            where state = 'pending' and next_attempt_at <= now() and (lease_until is null or lease_until < now())
            order by next_attempt_at
            limit ${limit}
            for update skip locked)
          and e.id = d.endpoint_id
        returning d.id, d.body, d.attempts, d.created_at, e.url, e.id as endpoint_id, e.iv, e.tag, e.sealed_secret`.execute(
        db,
      );
      return rows.map(
        (r): DueDelivery => ({
          id: r.id,
          url: r.url,
          body: r.body,
          attempts: r.attempts,
          createdAt: new Date(r.created_at),
          secret: open({ id: r.endpoint_id, iv: r.iv, tag: r.tag, sealed_secret: r.sealed_secret }),
        }),
      );
    },

    async recordAttempt(id, outcome) {
      const base = {
        attempts: sql<number>`attempts + 1`,
        lease_until: null,
        last_status: outcome.status ?? null,
        last_error: outcome.error ?? null,
      };
      const next =
        outcome.kind === "delivered"
          ? { state: "delivered", delivered_at: new Date().toISOString() }
          : outcome.kind === "failed"
            ? { state: "failed" }
            : { next_attempt_at: outcome.retryAt.toISOString() };
      await db
        .updateTable("webhook_deliveries")
        .set({ ...base, ...next } as never)
        .where("id", "=", id)
        .execute();
    },
  };
}
