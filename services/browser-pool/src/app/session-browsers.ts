import { IllegalStateError, NotFoundError } from "@bas/errors";
import { cdpUrlFor } from "../domain/cdp-route";
import type { BrowserSettingsInput } from "../domain/browser-settings";
import type { BrowserView } from "../domain/browser-view";
import type { BrowserPool } from "./browser-pool";
import { createKeyedLock } from "./keyed-lock";
import type { BrowserReadModel } from "./ports";

export interface SessionBrowsersDeps {
  pool: Pick<BrowserPool, "create" | "stop" | "caughtUp">;
  readModel: Pick<BrowserReadModel, "latestForSession">;
  /** Base of the CDP URLs handed to the runner. */
  cdpInternalUrl: string;
  /** Timeout of a session's browser; the session's end stops it sooner. */
  timeoutMinutes: number;
}

/** How long a replica remembers a session it ended: ample for its runner to hear of the end. */
const ENDED_MEMORY_MS = 10 * 60_000;

/** The browsers of v3 sessions: one per session, acquired by the runner, ended with the session. */
export function createSessionBrowsers(deps: SessionBrowsersDeps) {
  const { pool, readModel } = deps;
  const sessionLock = createKeyedLock();
  // The session's end can stop its browser before the runner hears of that end; the runner then takes the lost
  // connection for a browser that went away and asks again. It must not get a new browser nobody would stop.
  const ended = new Set<string>();
  const internalUrl = (browserId: string, secret: string) => cdpUrlFor(deps.cdpInternalUrl, browserId, secret);

  return {
    /**
     * Idempotent per session: the browser it already has while that runs, else a new one. `reopened`: the session
     * ended and was set up again (a v4 conversation that timed out), so its end no longer stands.
     */
    acquire(input: { projectId: string; sessionId: string; settings?: BrowserSettingsInput; reopened?: boolean }) {
      return sessionLock(input.sessionId, async () => {
        if (input.reopened) ended.delete(input.sessionId);
        if (ended.has(input.sessionId)) throw new IllegalStateError("the session has ended");
        // A caller may just have stopped the session's browser (answered before the read model showed it).
        await pool.caughtUp();
        const existing = await readModel.latestForSession(input.sessionId);
        if (existing && existing.view.projectId !== input.projectId) {
          throw new IllegalStateError("session belongs to another project");
        }
        if (existing && existing.view.status !== "stopped") {
          return { view: existing.view, internalCdpUrl: internalUrl(existing.view.id, existing.cdpSecret) };
        }
        const { view, secret } = await pool.create({
          projectId: input.projectId,
          sessionId: input.sessionId,
          settings: input.settings,
          timeoutMinutes: deps.timeoutMinutes,
        });
        return { view, internalCdpUrl: internalUrl(view.id, secret) };
      });
    },

    /** The session ended: stop its browser (idempotent). */
    async release(projectId: string, sessionId: string): Promise<BrowserView> {
      const existing = await readModel.latestForSession(sessionId);
      if (!existing || existing.view.projectId !== projectId) throw new NotFoundError("No browser for this session");
      if (existing.view.status === "stopped") return existing.view;
      return pool.stop(existing.view.id, { reason: "session_ended" });
    },

    /** Session reactor: the session is over, so is its browser. */
    async endSession(sessionId: string): Promise<void> {
      ended.add(sessionId);
      setTimeout(() => ended.delete(sessionId), ENDED_MEMORY_MS).unref();
      const existing = await readModel.latestForSession(sessionId);
      if (existing && existing.view.status !== "stopped")
        await pool.stop(existing.view.id, { reason: "session_ended" });
    },
  };
}

export type SessionBrowsers = ReturnType<typeof createSessionBrowsers>;
