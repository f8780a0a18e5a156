import type { Projection } from "@bas/event-store";
import { sql } from "kysely";
import type { SessionsDb } from "./schema";

/** browser-pool's aggregate type; its `BrowserRequested` names the session a browser serves. */
const BROWSER_AGGREGATE = "browser";

/**
 * Which browsers browser-pool opened for each session, learnt from browser-pool's own events. A session that had one
 * shows its terminal status only once billing has charged that browser's last usage report (its cost is final then);
 * a session browser-pool never opened a browser for has nothing to wait for.
 */
export const sessionBrowsersProjection: Projection<SessionsDb> = {
  name: "sessions-browsers",
  aggregateType: BROWSER_AGGREGATE,
  async setup(db) {
    await sql`create table if not exists session_browsers (
      browser_id text primary key,
      session_id text not null)`.execute(db);
    await sql`create index if not exists session_browsers_by_session on session_browsers (session_id)`.execute(db);
  },
  async teardown(db) {
    await sql`drop table if exists session_browsers`.execute(db);
  },
  async apply(trx, event) {
    if (event.type !== "BrowserRequested") return;
    const sessionId = (event.data as { sessionId?: unknown }).sessionId;
    if (typeof sessionId !== "string" || !sessionId) return;
    await trx
      .insertInto("session_browsers")
      .values({ browser_id: event.aggregateId, session_id: sessionId })
      .onConflict((oc) => oc.column("browser_id").doNothing())
      .execute();
  },
};
