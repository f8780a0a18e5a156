import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import { ENDED_RUN_STATUSES, RunStatusResponse } from "./run-schemas";

export const route = defineRoute({
  method: "get",
  path: "/api/v4/runs/{id}/status",
  auth: "api-key",
  operationId: "getRunStatus",
  summary: "A run's status and nothing else: the cheap lookup to poll until completed, failed or cancelled",
  tags: ["Runs"],
  request: { params: IdParams },
  responses: { 200: { description: "The run's status", schema: RunStatusResponse } },
  errors: [404],
  async handler({ params, project, signal }, deps) {
    const status = await deps.runStatusCache.get(project.projectId, params.id, async () => {
      const { status, sessionId, awaitingCosts } = await deps.runs.getRunStatus(
        { projectId: project.projectId, runId: params.id },
        { signal },
      );
      return { value: status, sessionId, cacheable: !awaitingCosts, final: ENDED_RUN_STATUSES.has(status) };
    });
    return { body: { status } };
  },
});
