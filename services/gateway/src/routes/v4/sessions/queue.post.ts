import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import { QueuedMessage, QueueMessageRequest, toQueuedMessage } from "./queue-schemas";

export const route = defineRoute({
  method: "post",
  path: "/api/v4/sessions/{id}/queue",
  auth: "api-key",
  operationId: "queueSessionMessage",
  summary:
    "Send a message to a session: it runs at once when the session is idle, as the next turn when it is busy, " +
    "or with interrupt straight away (the active run is cancelled). X-V4-Queue-Deduplicate makes a retried send " +
    "answer with the first message instead of queueing it twice.",
  tags: ["Sessions"],
  request: { params: IdParams, body: QueueMessageRequest },
  responses: { 200: { description: "The message", schema: QueuedMessage } },
  errors: [402, 404, 409, 429],
  async handler({ params, body, project, headers }, deps) {
    await deps.requireCredit(project.projectId, params.id);
    const dedupe = headers["x-v4-queue-deduplicate"];
    // Not tied to the caller's connection: a message that was queued is answered, never half-sent.
    const message = await deps.runs.queueMessage({
      projectId: project.projectId,
      sessionId: params.id,
      text: body.text,
      interrupt: body.interrupt,
      dedupeKey: typeof dedupe === "string" && dedupe !== "" ? dedupe : undefined,
      attachedFileIds: body.attachedFileIds ?? [],
    });
    // An interrupt cancelled the active run: the next status poll here must show it.
    if (body.interrupt) deps.runStatusCache.invalidate(params.id);
    return { body: toQueuedMessage(message) };
  },
});
