import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import { DeliveriesQuery, toDelivery, WebhookDeliveryList } from "./webhook-schemas";

export const route = defineRoute({
  method: "get",
  path: "/api/v4/webhooks/{id}/deliveries",
  auth: "api-key",
  operationId: "listWebhookDeliveries",
  summary: "What was sent to an endpoint and how it answered, newest first",
  tags: ["Webhooks"],
  request: { params: IdParams, query: DeliveriesQuery },
  responses: { 200: { description: "The delivery log", schema: WebhookDeliveryList } },
  errors: [404],
  async handler({ params, query, project, signal }, deps) {
    const { deliveries } = await deps.webhooks.listDeliveries(
      { projectId: project.projectId, endpointId: params.id, limit: query.limit },
      { signal },
    );
    return { body: { deliveries: deliveries.map(toDelivery) } };
  },
});
