import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import { RunAttachmentsResponse } from "./run-schemas";
import { toRunAttachments } from "./run-view";

export const route = defineRoute({
  method: "get",
  path: "/api/v4/runs/{id}/attachments",
  auth: "api-key",
  operationId: "listRunAttachments",
  summary: "The files a run was pointed to (attachedFileIds), in that order, as they were when it was created",
  tags: ["Runs"],
  request: { params: IdParams },
  responses: { 200: { description: "The run's attachments", schema: RunAttachmentsResponse } },
  errors: [404],
  async handler({ params, project, signal }, deps) {
    const run = await deps.runs.getRun({ projectId: project.projectId, runId: params.id }, { signal });
    return { body: toRunAttachments(run) };
  },
});
