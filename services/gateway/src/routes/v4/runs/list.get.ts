import { defineRoute } from "../../../http/route";
import { RunListQuery, RunListResponse } from "./run-schemas";
import { toRunSummary } from "./run-view";

export const route = defineRoute({
  method: "get",
  path: "/api/v4/runs",
  auth: "api-key",
  operationId: "listRuns",
  summary: "List the project's runs, newest first, one page at a time (keyset cursor)",
  tags: ["Runs"],
  request: { query: RunListQuery },
  responses: { 200: { description: "One page of runs", schema: RunListResponse } },
  async handler({ query, project, signal }, deps) {
    const page = await deps.runs.listRuns(
      { projectId: project.projectId, limit: query.limit, cursor: query.cursor, sessionId: query.sessionId },
      { signal },
    );
    return {
      body: { runs: page.runs.map(toRunSummary), nextCursor: page.nextCursor ?? null, hasMore: page.hasMore },
    };
  },
});
