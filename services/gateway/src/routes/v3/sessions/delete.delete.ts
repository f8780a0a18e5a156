import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";

export const route = defineRoute({
  method: "delete",
  path: "/api/v3/sessions/{id}",
  auth: "api-key",
  operationId: "deleteSession",
  summary: "Delete a session (a running one is stopped first); afterwards it is 404 and absent from lists",
  tags: ["Sessions"],
  request: { params: IdParams },
  responses: { 204: { description: "Deleted" } },
  errors: [404],
  async handler({ params, project }, deps) {
    await deps.sessions.deleteSession({ projectId: project.projectId, sessionId: params.id });
    deps.sessionCache.invalidate(params.id);
    return { status: 204 };
  },
});
