import { defineRoute } from "../../../http/route";
import { QueuedMessage, QueuedMessageParams, toQueuedMessage } from "./queue-schemas";

export const route = defineRoute({
  method: "delete",
  path: "/api/v4/sessions/{id}/queue/{messageId}",
  auth: "api-key",
  operationId: "cancelQueuedMessage",
  summary: "Take back a message that still waits; 409 once it has become a run (the detail says what it became)",
  tags: ["Sessions"],
  request: { params: QueuedMessageParams },
  responses: { 200: { description: "The message, cancelled", schema: QueuedMessage } },
  errors: [404, 409],
  async handler({ params, project }, deps) {
    const message = await deps.runs.cancelQueuedMessage({
      projectId: project.projectId,
      sessionId: params.id,
      messageId: params.messageId,
    });
    return { body: toQueuedMessage(message) };
  },
});
