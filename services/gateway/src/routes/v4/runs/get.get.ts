import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import { RunSummary } from "./run-schemas";
import { toRunSummary } from "./run-view";

export const route = defineRoute({
  method: "get",
  path: "/api/v4/runs/{id}",
  auth: "api-key",
  operationId: "getRun",
  summary: "Read one run in full: its result once it has ended, its tokens and cost",
  tags: ["Runs"],
  request: { params: IdParams },
  responses: { 200: { description: "The run", schema: RunSummary } },
  errors: [404],
  async handler({ params, project, signal }, deps) {
    const run = await deps.runs.getRun({ projectId: project.projectId, runId: params.id }, { signal });
    return { body: toRunSummary(run) };
  },
});
