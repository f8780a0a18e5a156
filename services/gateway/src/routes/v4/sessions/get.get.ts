import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import { SessionInfo } from "../runs/run-schemas";
import { toSessionInfo } from "../runs/run-view";

export const route = defineRoute({
  method: "get",
  path: "/api/v4/sessions/{id}",
  auth: "api-key",
  operationId: "getV4Session",
  summary: "Read one conversation, shown through its latest run",
  tags: ["Runs"],
  request: { params: IdParams },
  responses: { 200: { description: "The conversation", schema: SessionInfo } },
  errors: [404],
  async handler({ params, project, signal }, deps) {
    const conversation = await deps.runs.getConversation(
      { projectId: project.projectId, sessionId: params.id },
      { signal },
    );
    return { body: toSessionInfo(conversation) };
  },
});
