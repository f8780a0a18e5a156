import { defineRoute } from "../../../http/route";
import { SessionInfoList, SessionListQuery } from "../runs/run-schemas";
import { toSessionInfo } from "../runs/run-view";

export const route = defineRoute({
  method: "get",
  path: "/api/v4/sessions",
  auth: "api-key",
  operationId: "listV4Sessions",
  summary: "List the project's conversations, newest first, each shown through its latest run",
  tags: ["Runs"],
  request: { query: SessionListQuery },
  responses: { 200: { description: "One page of conversations", schema: SessionInfoList } },
  async handler({ query, project, signal }, deps) {
    const page = await deps.runs.listConversations(
      { projectId: project.projectId, limit: query.limit, cursor: query.cursor },
      { signal },
    );
    return {
      body: { sessions: page.sessions.map(toSessionInfo), nextCursor: page.nextCursor ?? null, hasMore: page.hasMore },
    };
  },
});
