import { z } from "zod";
import { HttpError } from "../../http/http-error";
import { defineRoute } from "../../http/route";
import { UUID_PATTERN } from "../../schemas/common";
import { waitingPage } from "./waiting-page";

/**
 * A session's `liveUrl`: the link is the credential (no API key), checked by the sessions service. Once the session
 * has its browser, the answer is a redirect to that browser's live view; before that, a page that looks again every
 * second; after the session ended, a page that says so. A wrong link is the same 404 as an unknown session.
 */
export const route = defineRoute({
  method: "get",
  path: "/live/sessions/{sessionId}/{token}",
  auth: "public",
  hidden: true,
  operationId: "openSessionLiveView",
  summary: "A session's live view (the link is the credential)",
  request: {
    // Checked in the handler: a malformed link is the same 404 as a wrong one.
    params: z.object({ sessionId: z.string().max(64), token: z.string().max(128) }),
  },
  responses: { 200: { description: "HTML page", contentType: "text/html" } },
  errors: [404],
  async handler({ params, signal }, deps) {
    if (!UUID_PATTERN.test(params.sessionId) || !/^[A-Za-z0-9_-]{16,128}$/.test(params.token)) {
      throw new HttpError(404, "Session not found");
    }
    const target = await deps.sessions.getLiveView({ sessionId: params.sessionId, token: params.token }, { signal });
    const page = (status: number, text: string, refresh: boolean) => ({
      status,
      body: waitingPage(text, refresh),
      type: "text/html; charset=utf-8",
      headers: { "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" },
    });
    if (target.ended) return page(200, "This session has ended.", false);
    if (!target.browserId) return page(200, "Starting the browser…", true);
    const browser = await deps.browserPool.getBrowser(
      { projectId: target.projectId, browserId: target.browserId },
      { signal },
    );
    if (browser.status === "stopped" || !browser.liveUrl) return page(200, "This session's browser has ended.", true);
    return { status: 302, body: "", headers: { Location: browser.liveUrl, "Cache-Control": "no-store" } };
  },
});
