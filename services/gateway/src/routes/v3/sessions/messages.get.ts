import { SESSION_CHANGE_KINDS, type sessions } from "@bas/proto";
import { z } from "zod";
import { openPushStream } from "../../../app/push-stream";
import { toMessageResponse } from "../../../domain/session-view";
import { defineRoute } from "../../../http/route";
import { SSE_HEADERS, SSE_HEARTBEAT_MS, sseBody, wantsEventStream } from "../../../http/sse";
import { IdParams, queryInt, Uuid } from "../../../schemas/common";
import { MessageListResponse } from "../../../schemas/session";

/** A message id the caller resumes after (Last-Event-ID); anything that is not one is ignored. */
const messageIdOf = (value: string | string[] | undefined) => {
  const parsed = Uuid.safeParse(Array.isArray(value) ? value[0] : value);
  return parsed.success ? parsed.data : undefined;
};

export const route = defineRoute({
  method: "get",
  path: "/api/v3/sessions/{id}/messages",
  auth: "api-key",
  operationId: "listSessionMessages",
  summary:
    "The session's messages in chronological order, paged by message id: without a cursor the newest `limit` " +
    "(hasMore: older ones exist; page back with `before`), with `after` the ones after it. With " +
    "`Accept: text/event-stream`: the " +
    "messages after `after` pushed as Server-Sent Events as they are recorded (id = message id, event = its type, " +
    "data = the message), resumable with Last-Event-ID, ending once the session has ended and its last message went " +
    "out.",
  tags: ["Sessions"],
  request: {
    params: IdParams,
    query: z.object({
      after: Uuid.optional().describe("Only messages after this message id."),
      before: Uuid.optional().describe("Only messages before this message id."),
      limit: queryInt({ min: 1, max: 100, default: 50, description: "Messages per page." }),
    }),
  },
  responses: { 200: { description: "One page of messages", schema: MessageListResponse } },
  errors: [404],
  async handler({ params, query, project, signal, headers }, deps) {
    const read = (after: string | undefined, before: string | undefined, latest: boolean) =>
      deps.sessions.listMessages(
        { projectId: project.projectId, sessionId: params.id, after, before, limit: query.limit, latest },
        { signal },
      );
    if (!wantsEventStream(headers.accept)) {
      const page = await read(query.after, query.before, true);
      return {
        body: { messages: page.messages.map((m) => toMessageResponse(m, deps.urls.sign)), hasMore: page.hasMore },
      };
    }
    const items = await openPushStream({
      watch: deps.changeNotices.watch(SESSION_CHANGE_KINDS.messages, params.id),
      cursor: messageIdOf(headers["last-event-id"]) ?? query.after,
      cursorOf: (m: sessions.Message): string | undefined => m.id,
      read: async (after: string | undefined) => {
        // A stream starts at the beginning (or its cursor) and pushes everything after it.
        const page = await read(after, undefined, false);
        return { items: page.messages, hasMore: page.hasMore, complete: page.complete };
      },
      signal,
      heartbeatMs: SSE_HEARTBEAT_MS,
    });
    async function* messages() {
      for await (const pushed of items) {
        if ("heartbeat" in pushed) yield { comment: "still here" };
        else
          yield { id: pushed.item.id, event: pushed.item.type, data: toMessageResponse(pushed.item, deps.urls.sign) };
      }
    }
    return { body: sseBody(messages()), type: "text/event-stream", headers: SSE_HEADERS };
  },
});
