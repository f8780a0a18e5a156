import type { Projection } from "@bas/event-store";
import type { SessionBrowsers } from "./session-browsers";

/** Session events after which the session's browser has no use: stopped, timed out, failed sandbox, deleted. */
export const SESSION_END_EVENTS: ReadonlySet<string> = new Set([
  "SessionStopped",
  "SessionTimedOut",
  "SandboxFailed",
  "SessionDeleted",
]);

/**
 * Reads the `session` aggregate's events (run like a projection, so each is handled once, in order, by one replica)
 * and stops the browser of a session that ended, with reason `session_ended`. Stopping twice is harmless.
 */
export function sessionEndReactor(sessions: Pick<SessionBrowsers, "endSession">): Projection {
  return {
    name: "browser_pool_session_ends",
    aggregateType: "session",
    setup: async () => undefined,
    teardown: async () => undefined,
    async apply(_trx, event) {
      if (SESSION_END_EVENTS.has(event.type)) await sessions.endSession(event.aggregateId);
    },
  };
}
