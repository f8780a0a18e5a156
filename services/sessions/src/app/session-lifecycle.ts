import type { StopStrategy } from "../domain/commands";
import type { SessionQueries, SessionRecord } from "./ports";
import type { SessionCommands } from "./session-commands";
import { recordOf } from "./session-reads";

/** What the caller can do to a session besides creating it. */
export function createSessionLifecycle(commands: SessionCommands, queries: SessionQueries) {
  return {
    async stop(projectId: string, sessionId: string, strategy: StopStrategy): Promise<SessionRecord> {
      const handled = await commands.execute(sessionId, { type: "StopSession", projectId, strategy });
      return (await queries.get(projectId, sessionId)) ?? recordOf(handled.state);
    },
    async delete(projectId: string, sessionId: string): Promise<void> {
      await commands.execute(sessionId, { type: "DeleteSession", projectId });
    },
  };
}

export type SessionLifecycle = ReturnType<typeof createSessionLifecycle>;
