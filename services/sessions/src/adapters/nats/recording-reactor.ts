import type { Reactor } from "@bas/event-store";
import { ServiceError } from "@bas/errors";
import { BROWSER_AGGREGATE, type BrowserEventType, browserPool } from "@bas/proto";
import type { SessionCommands } from "../../app/session-commands";

type Log = { warn(o: object, msg: string): void };

/**
 * browser-pool stored the recording of a session's browser: it becomes one of the session's recordings
 * (`recordingUrls`). A refusal (the session was deleted) is final and skipped; anything else is retried.
 */
export function recordingReactor(commands: SessionCommands, log?: Log): Reactor {
  return {
    name: "sessions-recordings",
    aggregateType: BROWSER_AGGREGATE,
    canHandle: ["BrowserRecordingSaved"] satisfies BrowserEventType[],
    async react(event) {
      const { ref, sessionId } = browserPool.BrowserRecordingSaved.fromJSON(event.data);
      if (!sessionId) return;
      try {
        await commands.execute(sessionId, { type: "ReportRecording", ref });
      } catch (err) {
        if (!(err instanceof ServiceError)) throw err;
        log?.warn({ err, sessionId }, "recording not added to the session");
      }
    },
  };
}
