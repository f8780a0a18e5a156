import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";

export const route = defineRoute({
  method: "delete",
  path: "/api/v4/webhooks/{id}",
  auth: "api-key",
  operationId: "deleteWebhook",
  summary: "Stop deliveries to an endpoint; what was still pending for it is dropped",
  tags: ["Webhooks"],
  request: { params: IdParams },
  responses: { 204: { description: "Deleted" } },
  errors: [404],
  async handler({ params, project }, deps) {
    await deps.webhooks.deleteEndpoint({ projectId: project.projectId, endpointId: params.id });
    return { status: 204 };
  },
});
