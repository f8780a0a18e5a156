import { HttpError } from "../../../http/http-error";
import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";

/**
 * Zero Data Retention is not offered here: what a session recorded lives in the event stream, which a purge could not
 * erase. A client asking is told so (403, as for a project without ZDR), after the session is found, not left to read
 * an unknown route's 404 as "no such session".
 */
export const route = defineRoute({
  method: "post",
  path: "/api/v4/sessions/{id}/purge",
  auth: "api-key",
  operationId: "purgeV4Session",
  summary: "Purge a session's data at once (Zero Data Retention): not offered by this service, always 403",
  tags: ["Runs"],
  request: { params: IdParams },
  responses: { 204: { description: "Never: purging is not offered" } },
  errors: [403, 404],
  async handler({ params, project, signal }, deps) {
    await deps.runs.getConversation({ projectId: project.projectId, sessionId: params.id }, { signal });
    throw new HttpError(403, "Project is not ZDR-enabled: this service offers no purge of a session's data on demand");
  },
});
