import type { Projection } from "@bas/event-store";
import { BROWSER_AGGREGATE, type BrowserEventType, browserPool } from "@bas/proto";
import { sql } from "kysely";
import type { SessionsDb } from "./schema";

/**
 * Which browsers browser-pool opened for each session, learnt from browser-pool's own events. A session that had one
 * shows its terminal status only once billing has charged that browser's last usage report (its cost is final then);
 * a session browser-pool never opened a browser for has nothing to wait for.
 */
export function sessionBrowsersProjection(): Projection<SessionsDb> {
  return {
    name: "sessions-browsers",
    aggregateType: BROWSER_AGGREGATE,
    // browser-pool's `BrowserRequested` names the session a browser serves.
    canHandle: ["BrowserRequested"] satisfies BrowserEventType[],
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
      const { sessionId } = browserPool.BrowserRequested.fromJSON(event.data);
      if (!sessionId) return;
      await trx
        .insertInto("session_browsers")
        .values({ browser_id: event.aggregateId, session_id: sessionId })
        .onConflict((oc) => oc.column("browser_id").doNothing())
        .execute();
    },
  };
}
