import { z } from "zod";
import { toMessageResponse } from "../../../domain/session-view";
import { defineRoute } from "../../../http/route";
import { IdParams, queryInt, Uuid } from "../../../schemas/common";
import { MessageListResponse } from "../../../schemas/session";

export const route = defineRoute({
  method: "get",
  path: "/api/v3/sessions/{id}/messages",
  auth: "api-key",
  operationId: "listSessionMessages",
  summary: "The session's messages in chronological order, paged by message id",
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
  async handler({ params, query, project, signal }, deps) {
    const page = await deps.sessions.listMessages(
      {
        projectId: project.projectId,
        sessionId: params.id,
        after: query.after,
        before: query.before,
        limit: query.limit,
      },
      { signal },
    );
    return {
      body: { messages: page.messages.map((m) => toMessageResponse(m, deps.urls.sign)), hasMore: page.hasMore },
    };
  },
});
