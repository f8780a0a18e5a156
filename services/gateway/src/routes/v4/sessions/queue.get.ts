import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import { QueueListResponse, toQueuedMessage } from "./queue-schemas";

export const route = defineRoute({
  method: "get",
  path: "/api/v4/sessions/{id}/queue",
  auth: "api-key",
  operationId: "listSessionQueue",
  summary: "The session's messages that still wait, oldest first, and where interrupts cut its runs short",
  tags: ["Sessions"],
  request: { params: IdParams },
  responses: { 200: { description: "The pending messages and the steering cutoffs", schema: QueueListResponse } },
  errors: [404],
  async handler({ params, project, signal }, deps) {
    const { messages, steeringCutoffs } = await deps.runs.listQueue(
      { projectId: project.projectId, sessionId: params.id },
      { signal },
    );
    const cutoffs = steeringCutoffs.map((c) => ({
      sourceRunId: c.sourceRunId,
      createdAt: (c.createdAt ?? new Date(0)).toISOString(),
    }));
    return { body: { queue: messages.map(toQueuedMessage), steeringCutoffs: cutoffs } };
  },
});
