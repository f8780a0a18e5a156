import { defineRoute } from "../../../http/route";
import { DeliveryParams, toDelivery, WebhookDelivery } from "./webhook-schemas";

export const route = defineRoute({
  method: "post",
  path: "/api/v4/webhooks/{id}/deliveries/{deliveryId}/resend",
  auth: "api-key",
  operationId: "resendWebhookDelivery",
  summary:
    "Send a delivery again, the same body and id, with another day of retries: one that failed, or that was " +
    "delivered but the receiver lost (409 while it is still pending)",
  tags: ["Webhooks"],
  request: { params: DeliveryParams },
  responses: { 200: { description: "The delivery, due at once", schema: WebhookDelivery } },
  errors: [404, 409],
  async handler({ params, project }, deps) {
    const delivery = await deps.webhooks.resendDelivery({
      projectId: project.projectId,
      endpointId: params.id,
      deliveryId: params.deliveryId,
    });
    return { body: toDelivery(delivery) };
  },
});
