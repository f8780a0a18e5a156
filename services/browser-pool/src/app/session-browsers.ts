import { IllegalStateError, NotFoundError } from "@bas/errors";
import type { Kysely } from "kysely";
import { cdpUrlFor } from "../adapters/cdp/cdp-route";
import {
  type BrowserPoolDb,
  type BrowserRecord,
  latestForSession,
  viewFromRow,
} from "../adapters/pg/browsers-projection";
import type { BrowserSettingsInput } from "../domain/browser-settings";
import type { BrowserView } from "../domain/browser-view";
import type { BrowserPool } from "./browser-pool";
import { createKeyedLock } from "./keyed-lock";

export interface SessionBrowsersDeps {
  pool: BrowserPool;
  db: Kysely<BrowserPoolDb>;
  /** Base of the CDP URLs handed to the runner. */
  cdpInternalUrl: string;
  /** Timeout of a session's browser; the session's end stops it sooner. */
  timeoutMinutes: number;
}

/** How long a replica remembers a session it ended: ample for its runner to hear of the end. */
const ENDED_MEMORY_MS = 10 * 60_000;

/** The browsers of v3 sessions: one per session, acquired by the runner, ended with the session. */
export function createSessionBrowsers(deps: SessionBrowsersDeps) {
  const { pool, db } = deps;
  const sessionLock = createKeyedLock();
  // The session's end can stop its browser before the runner hears of that end; the runner then takes the lost
  // connection for a browser that went away and asks again. It must not get a new browser nobody would stop.
  const ended = new Set<string>();
  const internalUrl = (row: Pick<BrowserRecord, "id" | "cdp_secret">) =>
    cdpUrlFor(deps.cdpInternalUrl, row.id, row.cdp_secret);

  return {
    /** Idempotent per session: the browser it already has while that runs, else a new one. */
    acquire(input: { projectId: string; sessionId: string; settings?: BrowserSettingsInput }) {
      return sessionLock(input.sessionId, async () => {
        if (ended.has(input.sessionId)) throw new IllegalStateError("the session has ended");
        const existing = await latestForSession(db, input.sessionId);
        if (existing && existing.project_id !== input.projectId) {
          throw new IllegalStateError("session belongs to another project");
        }
        if (existing && existing.status !== "stopped") {
          return { view: viewFromRow(existing), internalCdpUrl: internalUrl(existing) };
        }
        const { view, secret } = await pool.create({
          projectId: input.projectId,
          sessionId: input.sessionId,
          settings: input.settings,
          timeoutMinutes: deps.timeoutMinutes,
        });
        return { view, internalCdpUrl: internalUrl({ id: view.id, cdp_secret: secret }) };
      });
    },

    /** The session ended: stop its browser (idempotent). */
    async release(projectId: string, sessionId: string): Promise<BrowserView> {
      const existing = await latestForSession(db, sessionId);
      if (!existing || existing.project_id !== projectId) throw new NotFoundError("No browser for this session");
      if (existing.status === "stopped") return viewFromRow(existing);
      return pool.stopFor(existing.id, "session_ended");
    },

    /** Session reactor: the session is over, so is its browser. */
    async endSession(sessionId: string): Promise<void> {
      ended.add(sessionId);
      setTimeout(() => ended.delete(sessionId), ENDED_MEMORY_MS).unref();
      const existing = await latestForSession(db, sessionId);
      if (existing && existing.status !== "stopped") await pool.end(existing.id, "session_ended");
    },
  };
}

export type SessionBrowsers = ReturnType<typeof createSessionBrowsers>;
