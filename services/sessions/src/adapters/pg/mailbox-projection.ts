import type { Projection, StoredEvent } from "@bas/event-store";
import { SESSION_ENDED_EVENT_TYPES } from "@bas/proto";
import { type Kysely, type Selectable, sql } from "kysely";
import type { MailboxQueries, MailRecord } from "../../app/ports";
import { SESSION_AGGREGATE, type SessionEvent } from "../../domain/events";
import type { SessionsDb } from "./schema";

const ENDED: readonly string[] = SESSION_ENDED_EVENT_TYPES;

/**
 * The temporary mailboxes: each address with its session and whether it still takes mail (what the SMTP receiver
 * asks at RCPT TO), and the mail each received (what the runner's mail tools read).
 */
export function mailboxProjection(): Projection<SessionsDb, SessionEvent> {
  return {
    name: "sessions-mailbox",
    aggregateType: SESSION_AGGREGATE,
    canHandle: ["SessionCreated", "MailReceived", ...SESSION_ENDED_EVENT_TYPES, "SessionReopened"],
    async setup(db) {
      await sql`create table if not exists session_mailboxes (
        address text primary key,
        session_id text not null,
        open boolean not null)`.execute(db);
      await sql`create index if not exists session_mailboxes_by_session on session_mailboxes (session_id)`.execute(db);
      await sql`create table if not exists session_mails (
        id text primary key,
        session_id text not null,
        sequence bigint not null,
        "from" text not null,
        "to" text not null,
        subject text not null,
        date timestamptz,
        received_at timestamptz not null,
        text text not null,
        text_truncated boolean not null,
        links json not null)`.execute(db);
      await sql`create index if not exists session_mails_order on session_mails (session_id, sequence)`.execute(db);
    },
    async teardown(db) {
      await sql`drop table if exists session_mailboxes`.execute(db);
      await sql`drop table if exists session_mails`.execute(db);
    },
    async apply(trx, event: StoredEvent<SessionEvent>) {
      if (event.type === "SessionCreated") {
        const address = event.data.inboxEmail;
        if (!address) return;
        await trx
          .insertInto("session_mailboxes")
          .values({ address: address.toLowerCase(), session_id: event.aggregateId, open: true })
          .onConflict((oc) => oc.column("address").doNothing())
          .execute();
        return;
      }
      if (event.type === "MailReceived") {
        const d = event.data;
        await trx
          .insertInto("session_mails")
          .values({
            id: d.mailId,
            session_id: event.aggregateId,
            sequence: event.sequence,
            from: d.from,
            to: d.to,
            subject: d.subject,
            date: d.date,
            received_at: event.occurredAt,
            text: d.text,
            text_truncated: d.textTruncated,
            links: JSON.stringify(d.links),
          })
          .onConflict((oc) => oc.column("id").doNothing())
          .execute();
        return;
      }
      // A session that ended closes its mailbox; a v4 conversation that takes a new turn opens it again.
      const open = event.type === "SessionReopened";
      if (!open && !ENDED.includes(event.type)) return;
      await trx.updateTable("session_mailboxes").set({ open }).where("session_id", "=", event.aggregateId).execute();
    },
  };
}

type MailRow = Selectable<SessionsDb["session_mails"]>;

const recordOf = (r: MailRow): MailRecord => ({
  id: r.id,
  sessionId: r.session_id,
  from: r.from,
  to: r.to,
  subject: r.subject,
  date: r.date ? new Date(r.date) : null,
  receivedAt: new Date(r.received_at),
  text: r.text,
  textTruncated: r.text_truncated,
  // A json column: pg parses it.
  links: r.links,
});

export function createMailboxQueries(db: Kysely<SessionsDb>): MailboxQueries {
  return {
    async owner(address) {
      const row = await db
        .selectFrom("session_mailboxes")
        .select(["session_id", "open"])
        .where("address", "=", address.toLowerCase())
        .executeTakeFirst();
      return row ? { sessionId: row.session_id, open: row.open } : undefined;
    },
    async list(sessionId) {
      const rows = await db
        .selectFrom("session_mails")
        .selectAll()
        .where("session_id", "=", sessionId)
        .orderBy("sequence", "desc")
        .execute();
      return rows.map(recordOf);
    },
    async get(sessionId, mailId) {
      const row = await db
        .selectFrom("session_mails")
        .selectAll()
        .where("session_id", "=", sessionId)
        .where("id", "=", mailId)
        .executeTakeFirst();
      return row ? recordOf(row) : undefined;
    },
  };
}
