import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from "node:crypto";
import { lockUntilCommit } from "@bas/event-store";
import { type Kysely, type Migration, type Selectable, sql, type Transaction } from "kysely";
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
  "008_webhook_event_filters_and_resends": {
    async up(db) {
      await sql`alter table webhook_endpoints add column events text[]`.execute(db);
      await sql`alter table webhook_deliveries add column resent_at timestamptz`.execute(db);
    },
  },
};

/**
 * A webhook event becomes one delivery per endpoint its project had when the event happened, in the transaction of
 * the read model that saw the change (a transactional outbox). Replays (a rebuild) find their rows there already.
 */
export async function enqueueWebhook(
  trx: Transaction<SessionsDb>,
  event: WebhookEvent,
  onlyTo?: { endpointId: string },
): Promise<void> {
  const body = webhookBody(event);
  // An endpoint gets the types it chose (all when it chose none); the test ping, to the new endpoint alone, is not one
  // to choose.
  await sql`insert into webhook_deliveries
      (id, endpoint_id, project_id, event_key, event_type, body, next_attempt_at, created_at)
    select gen_random_uuid()::text, e.id, e.project_id, ${event.key}, ${event.type}, ${body}, now(), now()
    from webhook_endpoints e
    where e.project_id = ${event.projectId} and e.deleted_at is null and e.created_at <= ${event.occurredAt}::timestamptz
      and ${onlyTo ? sql`e.id = ${onlyTo.endpointId}` : sql`(e.events is null or ${event.type} = any(e.events))`}
    on conflict (endpoint_id, event_key) do nothing`.execute(trx);
}

const deliveryOf = (r: Selectable<SessionsDb["webhook_deliveries"]>): WebhookDeliveryRecord => ({
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
});

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
  const endpointOf = (r: {
    id: string;
    url: string;
    created_at: Date;
    events: string[] | null;
  }): WebhookEndpointRecord => ({
    id: r.id,
    url: r.url,
    createdAt: new Date(r.created_at),
    events: r.events ?? [],
  });
  /** The project's live endpoint, or undefined. */
  const owned = (q: Kysely<SessionsDb>, projectId: string, endpointId: string) =>
    q
      .selectFrom("webhook_endpoints")
      .select(["id", "url", "created_at", "events"])
      .where("id", "=", endpointId)
      .where("project_id", "=", projectId)
      .where("deleted_at", "is", null)
      .executeTakeFirst();

  return {
    async createEndpoint({ projectId, url, secret, events, maxEndpoints }, test) {
      const id = randomUUID();
      const createdAt = new Date().toISOString();
      return db.transaction().execute(async (trx) => {
        await lockUntilCommit(trx, `webhook_endpoints/${projectId}`);
        const { n } = await trx
          .selectFrom("webhook_endpoints")
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("project_id", "=", projectId)
          .where("deleted_at", "is", null)
          .executeTakeFirstOrThrow();
        if (Number(n) >= maxEndpoints) return undefined;
        const chosen = events.length > 0 ? events : null;
        await trx
          .insertInto("webhook_endpoints")
          .values({ id, project_id: projectId, url, created_at: createdAt, events: chosen, ...seal(id, secret) })
          .execute();
        // The test ping: the first thing the endpoint gets, so its owner sees it works (or why not).
        await enqueueWebhook(
          trx,
          { ...test, key: `${test.key}/${id}`, projectId, occurredAt: createdAt },
          { endpointId: id },
        );
        return { id, url, createdAt: new Date(createdAt), events };
      });
    },

    async updateEndpoint(projectId, endpointId, { url, events }, test) {
      return db.transaction().execute(async (trx) => {
        const before = await trx
          .selectFrom("webhook_endpoints")
          .select("url")
          .where("id", "=", endpointId)
          .where("project_id", "=", projectId)
          .where("deleted_at", "is", null)
          .forUpdate()
          .executeTakeFirst();
        if (!before) return undefined;
        const row = await trx
          .updateTable("webhook_endpoints")
          .set({
            ...(url !== undefined && { url }),
            ...(events !== undefined && { events: events.length > 0 ? events : null }),
          })
          .where("id", "=", endpointId)
          .returning(["id", "url", "created_at", "events"])
          .executeTakeFirstOrThrow();
        if (url !== undefined && url !== before.url) {
          const now = new Date().toISOString();
          // What waits for a retry was meant for the new address: no reason to wait out a backoff earned at the old.
          await trx
            .updateTable("webhook_deliveries")
            .set({ next_attempt_at: now })
            .where("endpoint_id", "=", endpointId)
            .where("state", "=", "pending")
            .execute();
          await enqueueWebhook(
            trx,
            { ...test, key: `${test.key}/${endpointId}`, projectId, occurredAt: now },
            { endpointId },
          );
        }
        return endpointOf(row);
      });
    },

    async listEndpoints(projectId) {
      const rows = await db
        .selectFrom("webhook_endpoints")
        .select(["id", "url", "created_at", "events"])
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

    async rotateSecret(projectId, endpointId, secret) {
      const endpoint = await db
        .updateTable("webhook_endpoints")
        .set(seal(endpointId, secret))
        .where("id", "=", endpointId)
        .where("project_id", "=", projectId)
        .where("deleted_at", "is", null)
        .returning(["id", "url", "created_at", "events"])
        .executeTakeFirst();
      return endpoint && endpointOf(endpoint);
    },

    async resendDelivery(projectId, endpointId, deliveryId) {
      return db.transaction().execute(async (trx) => {
        if (!(await owned(trx, projectId, endpointId))) return undefined;
        const found = await trx
          .selectFrom("webhook_deliveries")
          .select("state")
          .where("id", "=", deliveryId)
          .where("endpoint_id", "=", endpointId)
          .forUpdate()
          .executeTakeFirst();
        if (!found) return undefined;
        if (found.state === "pending") return "pending";
        const now = new Date().toISOString();
        const row = await trx
          .updateTable("webhook_deliveries")
          .set({ state: "pending", attempts: 0, next_attempt_at: now, resent_at: now, lease_until: null })
          .where("id", "=", deliveryId)
          .returningAll()
          .executeTakeFirstOrThrow();
        return deliveryOf(row);
      });
    },

    async listDeliveries(projectId, endpointId, limit) {
      if (!(await owned(db, projectId, endpointId))) return undefined;
      const rows = await db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("endpoint_id", "=", endpointId)
        .orderBy("created_at", "desc")
        .orderBy("id")
        .limit(limit)
        .execute();
      return rows.map(deliveryOf);
    },

    async claimDue(limit, leaseMs) {
      // Leased, not locked: the POST happens outside any transaction, and another replica skips what is leased.
      const { rows } = await sql<{
        id: string;
        body: string;
        attempts: number;
        since: Date;
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
        returning d.id, d.body, d.attempts, coalesce(d.resent_at, d.created_at) as since, e.url, e.id as endpoint_id, e.iv, e.tag, e.sealed_secret`.execute(
        db,
      );
      return rows.map(
        (r): DueDelivery => ({
          id: r.id,
          url: r.url,
          body: r.body,
          attempts: r.attempts,
          since: new Date(r.since),
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
