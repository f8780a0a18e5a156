import { InvalidArgumentError, NotFoundError } from "@bas/errors";
import type { SessionState } from "../domain/state";
import {
  type MessageCursor,
  type MessagePage,
  type MessageQueries,
  type SessionPage,
  type SessionQueries,
  type SessionRecord,
  ZERO_COSTS,
} from "./ports";

const notFound = () => new NotFoundError("Session not found");

/** A session straight from the aggregate, for when the read model has not caught up (costs are then unknown). */
export function recordOf(state: SessionState): SessionRecord {
  if (state.status === "none" || state.deleted) throw notFound();
  return { session: state, status: state.status, costs: ZERO_COSTS };
}

export interface SessionReads {
  get(projectId: string, sessionId: string): Promise<SessionRecord>;
  list(projectId: string, page: number, pageSize: number): Promise<SessionPage>;
  messages(projectId: string, sessionId: string, cursor: MessageCursor): Promise<MessagePage>;
}

export interface SessionReadsDeps {
  queries: SessionQueries;
  messageQueries: MessageQueries;
  /** Waits (bounded) until the messages' read model has applied `version`, a stream sequence. */
  messagesReach(version: number): Promise<void>;
  /** Waits (bounded) until the read models include what this replica appended: a list shows the caller's writes. */
  caughtUp(): Promise<unknown>;
}

export function createSessionReads({
  queries,
  messageQueries,
  messagesReach,
  caughtUp,
}: SessionReadsDeps): SessionReads {
  async function get(projectId: string, sessionId: string) {
    const record = await queries.get(projectId, sessionId);
    if (!record) throw notFound();
    return record;
  }
  return {
    get,
    async list(projectId, page, pageSize) {
      await caughtUp();
      return queries.list(projectId, page, pageSize);
    },
    async messages(projectId, sessionId, cursor) {
      // The messages are a read model of their own, applied apart from the session's. A caller that has just read
      // a status (say `error`) must find the messages that led to it (the one that says why), not an older page.
      const { version } = await get(projectId, sessionId);
      await messagesReach(version);
      const result = await messageQueries.list(sessionId, cursor);
      if ("unknownCursor" in result) {
        const field = result.unknownCursor;
        throw new InvalidArgumentError(`${field} does not name a message of this session`, { field: ["query", field] });
      }
      return result;
    },
  };
}
