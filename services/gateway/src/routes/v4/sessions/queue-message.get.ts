import { defineRoute } from "../../../http/route";
import { QueuedMessage, QueuedMessageParams, toQueuedMessage } from "./queue-schemas";

export const route = defineRoute({
  method: "get",
  path: "/api/v4/sessions/{id}/queue/{messageId}",
  auth: "api-key",
  operationId: "getQueuedMessage",
  summary: "One message of the session's queue, whatever became of it (the last 100 ended ones stay readable)",
  tags: ["Sessions"],
  request: { params: QueuedMessageParams },
  responses: { 200: { description: "The message", schema: QueuedMessage } },
  errors: [404],
  async handler({ params, project, signal }, deps) {
    const message = await deps.runs.getQueuedMessage(
      { projectId: project.projectId, sessionId: params.id, messageId: params.messageId },
      { signal },
    );
    return { body: toQueuedMessage(message) };
  },
});
