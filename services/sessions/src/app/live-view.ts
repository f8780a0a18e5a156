import { NotFoundError } from "@bas/errors";
import { isTerminal } from "../domain/state";
import type { LiveLinks } from "./ports";
import type { SessionCommands } from "./session-commands";

export interface LiveViewTarget {
  projectId: string;
  /** The session's browser, once it has one. */
  browserId: string | null;
  /** No browser will come any more. */
  ended: boolean;
}

/**
 * Where a session's live view link leads now, from the aggregate (the link is opened right after the create, before
 * any read model could have the browser). A wrong token is the same not-found as an unknown session.
 */
export function createLiveView(commands: Pick<SessionCommands, "load">, links: LiveLinks) {
  return async (sessionId: string, token: string): Promise<LiveViewTarget> => {
    if (!links.verify(sessionId, token)) throw new NotFoundError("Session not found");
    const state = await commands.load(sessionId);
    if (state.status === "none" || state.deleted) throw new NotFoundError("Session not found");
    const ended = isTerminal(state);
    return { projectId: state.settings.projectId, browserId: ended ? null : state.browserId, ended };
  };
}
