import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import { RunSummary } from "./run-schemas";
import { toRunSummary } from "./run-view";

export const route = defineRoute({
  method: "post",
  path: "/api/v4/runs/{id}/cancel",
  auth: "api-key",
  operationId: "cancelRun",
  summary: "Cancel a run that has not ended; a run that has ended is answered as it is",
  tags: ["Runs"],
  request: { params: IdParams },
  responses: { 200: { description: "The run after the cancel", schema: RunSummary } },
  errors: [404],
  async handler({ params, project }, deps) {
    // Not tied to the caller's connection: a cancel that has begun is seen through.
    const run = await deps.runs.cancelRun({ projectId: project.projectId, runId: params.id });
    deps.runStatusCache.invalidate(run.sessionId);
    return { body: toRunSummary(run) };
  },
});
