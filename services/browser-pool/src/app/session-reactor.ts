import type { Reactor } from "@bas/event-store";
import { SESSION_AGGREGATE, SESSION_ENDED_EVENT_TYPES } from "@bas/proto";
import type { SessionBrowsers } from "./session-browsers";

/**
 * Reads the `session` aggregate's events and stops the browser of a session that ended (stopped, timed out, failed
 * sandbox, deleted), with reason `session_ended`. Stopping twice is harmless.
 */
export function sessionEndReactor(sessions: Pick<SessionBrowsers, "endSession">): Reactor {
  return {
    name: "browser_pool_session_ends",
    aggregateType: SESSION_AGGREGATE,
    canHandle: SESSION_ENDED_EVENT_TYPES,
    react: (event) => sessions.endSession(event.aggregateId),
  };
}
