import { toSessionResponse } from "../../../domain/session-view";
import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import { v3Schemas } from "../../../schemas/v3-schemas";

export const route = defineRoute({
  method: "get",
  path: "/api/v3/sessions/{id}",
  auth: "api-key",
  operationId: "getSession",
  summary: "Read one session, with its screenshot and recordings as presigned URLs (valid 5 minutes)",
  tags: ["Sessions"],
  request: { params: IdParams },
  responses: (deps) => ({ 200: { description: "The session", schema: v3Schemas(deps.models).session } }),
  errors: [404],
  async handler({ params, project, signal }, deps) {
    const session = await deps.sessionCache.get(project.projectId, params.id, async () => ({
      value: await deps.sessions.getSession({ projectId: project.projectId, sessionId: params.id }, { signal }),
      sessionId: params.id,
    }));
    return { body: toSessionResponse(session, deps.urls.sign) };
  },
});
