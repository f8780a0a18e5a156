import { setTimeout as sleep } from "node:timers/promises";
import type { StopStrategy } from "../domain/commands";
import { type CallDeadline, defaultDeadline } from "./call-deadline";
import type { SessionQueries, SessionRecord } from "./ports";
import type { SessionCommands } from "./session-commands";
import { recordOf } from "./session-reads";

const SETTLE_POLL_MS = 50;

/** What the caller can do to a session besides creating it. */
export function createSessionLifecycle(commands: SessionCommands, queries: SessionQueries) {
  return {
    async stop(
      projectId: string,
      sessionId: string,
      strategy: StopStrategy,
      deadline: CallDeadline = defaultDeadline(),
    ): Promise<SessionRecord> {
      const handled = await commands.execute(sessionId, { type: "StopSession", projectId, strategy });
      let record = (await queries.get(projectId, sessionId)) ?? recordOf(handled.state);
      // The answer shows the session stopped with its final costs: that waits for its browser to be stopped and its
      // last usage priced (a fraction of a second), as long as the caller's deadline allows; then it says what a
      // read would say.
      while (record.status !== record.session.status && deadline.remainingMs() > SETTLE_POLL_MS * 10) {
        await sleep(SETTLE_POLL_MS);
        record = (await queries.get(projectId, sessionId)) ?? record;
      }
      return record;
    },
    async delete(projectId: string, sessionId: string): Promise<void> {
      await commands.execute(sessionId, { type: "DeleteSession", projectId });
    },
  };
}

export type SessionLifecycle = ReturnType<typeof createSessionLifecycle>;
