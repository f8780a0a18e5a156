import { z } from "zod";
import { toSessionResponse } from "../../../domain/session-view";
import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import { v3Schemas } from "../../../schemas/v3-schemas";

export const StopSessionRequest = z
  .object({
    strategy: z
      .enum(["task", "session"])
      .default("session")
      .describe("`task`: stop the running task, the session stays idle; `session`: stop everything."),
  })
  .meta({ id: "StopSessionRequest" });

export const route = defineRoute({
  method: "post",
  path: "/api/v3/sessions/{id}/stop",
  auth: "api-key",
  operationId: "stopSession",
  summary: "Stop the session's task, or the whole session",
  tags: ["Sessions"],
  request: { params: IdParams, body: StopSessionRequest },
  responses: (deps) => ({ 200: { description: "The session after the stop", schema: v3Schemas(deps.models).session } }),
  errors: [404, 409],
  async handler({ params, body, project }, deps) {
    const session = await deps.sessions.stopSession({
      projectId: project.projectId,
      sessionId: params.id,
      strategy: body.strategy,
    });
    deps.sessionCache.invalidate(session.id);
    return { body: toSessionResponse(session, deps.urls.sign) };
  },
});
