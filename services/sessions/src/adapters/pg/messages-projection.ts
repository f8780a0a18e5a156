import type { Projection, StoredEvent } from "@bas/event-store";
import { type Kysely, sql } from "kysely";
import { SESSION_ENDED_EVENT_TYPES } from "@bas/proto";
import { type MessageData, SESSION_AGGREGATE, type SessionEvent } from "../../domain/events";
import type { MessageCursor, MessageQueries, MessageRecord } from "../../app/ports";
import type { SessionsDb } from "./schema";

/** The messages an event adds to its session's conversation. */
function messagesOf(event: StoredEvent<SessionEvent>): { message: MessageData; screenshotRef: string | null }[] {
  switch (event.type) {
    case "TaskDispatched":
      return [
        {
          message: {
            id: event.data.messageId,
            role: "human",
            type: "user_message",
            data: event.data.task,
            summary: null,
            hidden: false,
          },
          screenshotRef: null,
        },
      ];
    case "StepRecorded":
      return event.data.messages.map((message) => ({ message, screenshotRef: event.data.screenshotRef }));
    case "SandboxFailed":
      // Why the session ended (no browser could be had, it kept failing), as the conversation's last word. The
      // event's id is the message's, so a rebuild gives the same id.
      return [
        {
          message: {
            id: event.id,
            role: "ai",
            type: "error",
            data: event.data.error,
            summary: "The session ended with an error",
            hidden: false,
          },
          screenshotRef: null,
        },
      ];
    default:
      return [];
  }
}

/**
 * The conversation of each session: the task as the human message, then what every step produced. Ordered by
 * (stream sequence, position in the event), which is chronological and the same after a rebuild.
 */
export function messagesProjection(): Projection<SessionsDb, SessionEvent> {
  return {
    name: "sessions-messages",
    aggregateType: SESSION_AGGREGATE,
    canHandle: [
      "TaskDispatched",
      "StepRecorded",
      ...SESSION_ENDED_EVENT_TYPES,
      // A v4 conversation that ended can take new turns again.
      "SessionReopened",
    ],
    async setup(db) {
      await sql`create table if not exists session_messages (
        id text primary key,
        session_id text not null,
        sequence bigint not null,
        position int not null,
        role text not null,
        type text not null,
        data text not null,
        summary text,
        screenshot_ref text,
        hidden boolean not null,
        created_at timestamptz not null)`.execute(db);
      await sql`create index if not exists session_messages_order
        on session_messages (session_id, sequence, position)`.execute(db);
      // The session ended: its conversation has every message it will have (written in the same order as them).
      await sql`create table if not exists session_message_ends (session_id text primary key)`.execute(db);
    },
    async teardown(db) {
      await sql`drop table if exists session_messages`.execute(db);
      await sql`drop table if exists session_message_ends`.execute(db);
    },
    async apply(trx, event) {
      if ((SESSION_ENDED_EVENT_TYPES as readonly string[]).includes(event.type)) {
        await sql`insert into session_message_ends values (${event.aggregateId}) on conflict do nothing`.execute(trx);
      }
      if (event.type === "SessionReopened") {
        await sql`delete from session_message_ends where session_id = ${event.aggregateId}`.execute(trx);
      }
      const rows = messagesOf(event).map(({ message, screenshotRef }, position) => ({
        id: message.id,
        session_id: event.aggregateId,
        sequence: event.sequence,
        position,
        role: message.role,
        type: message.type,
        data: message.data,
        summary: message.summary,
        screenshot_ref: screenshotRef,
        hidden: message.hidden,
        created_at: event.occurredAt,
      }));
      if (rows.length === 0) return;
      await trx
        .insertInto("session_messages")
        .values(rows)
        .onConflict((oc) => oc.column("id").doNothing())
        .execute();
    },
  };
}

export function createMessageQueries(db: Kysely<SessionsDb>): MessageQueries {
  async function positionOf(sessionId: string, messageId: string) {
    return db
      .selectFrom("session_messages")
      .select(["sequence", "position"])
      .where("session_id", "=", sessionId)
      .where("id", "=", messageId)
      .executeTakeFirst();
  }

  async function list(sessionId: string, cursor: MessageCursor) {
    // Whether the conversation is over, read before its messages: an end seen here was written after every one of
    // them, so the read below has them all.
    const ended = await sql<{ one: number }>`select 1 as one from session_message_ends where session_id = ${sessionId}`
      .execute(db)
      .then((r) => r.rows.length > 0);
    const after = cursor.after ? await positionOf(sessionId, cursor.after) : undefined;
    const before = cursor.before ? await positionOf(sessionId, cursor.before) : undefined;
    if (cursor.after && !after) return { unknownCursor: "after" as const };
    if (cursor.before && !before) return { unknownCursor: "before" as const };
    // With only `before`, the page is the `limit` messages just before it (with `latest` and no cursor, the last
    // `limit`): read backwards, then reverse.
    const backwards = !after && (!!before || !!cursor.latest);
    let query = db.selectFrom("session_messages").selectAll().where("session_id", "=", sessionId);
    if (after) {
      query = query.where(sql<boolean>`(sequence, position) > (${after.sequence}::bigint, ${after.position}::int)`);
    }
    if (before) {
      query = query.where(sql<boolean>`(sequence, position) < (${before.sequence}::bigint, ${before.position}::int)`);
    }
    const direction = backwards ? "desc" : "asc";
    const rows = await query
      .orderBy("sequence", direction)
      .orderBy("position", direction)
      .limit(cursor.limit + 1)
      .execute();
    const hasMore = rows.length > cursor.limit;
    const page = rows.slice(0, cursor.limit);
    if (backwards) page.reverse();
    const messages: MessageRecord[] = page.map((r) => ({
      id: r.id,
      sessionId: r.session_id,
      role: r.role,
      type: r.type,
      data: r.data,
      summary: r.summary,
      screenshotRef: r.screenshot_ref,
      hidden: r.hidden,
      createdAt: new Date(r.created_at),
    }));
    // Read forwards, the page reaches the last message when nothing follows; read backwards, when it ends at the last.
    const reachesEnd = backwards ? !before : !hasMore;
    return { messages, hasMore, complete: ended && reachesEnd };
  }

  return { list };
}
