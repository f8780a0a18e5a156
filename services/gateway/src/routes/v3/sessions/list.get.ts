import { z } from "zod";
import { toSessionResponse } from "../../../domain/session-view";
import { defineRoute } from "../../../http/route";
import { queryInt } from "../../../schemas/common";
import { v3Schemas } from "../../../schemas/v3-schemas";

export const route = defineRoute({
  method: "get",
  path: "/api/v3/sessions",
  auth: "api-key",
  operationId: "listSessions",
  summary: "List the project's sessions, newest first",
  tags: ["Sessions"],
  request: {
    query: z.object({
      page: queryInt({ min: 1, default: 1, description: "Page number, 1-indexed." }),
      page_size: queryInt({ min: 1, max: 100, default: 20, description: "Sessions per page." }),
    }),
  },
  responses: (deps) => ({ 200: { description: "One page of sessions", schema: v3Schemas(deps.models).sessionList } }),
  async handler({ query, project, signal }, deps) {
    const page = await deps.sessions.listSessions(
      { projectId: project.projectId, page: query.page, pageSize: query.page_size },
      { signal },
    );
    return {
      body: {
        // Lists never carry presigned URLs: no signer.
        sessions: page.sessions.map((s) => toSessionResponse(s)),
        total: page.total,
        page: query.page,
        pageSize: query.page_size,
      },
    };
  },
});
