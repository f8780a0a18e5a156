import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import { toWebhook, Webhook, WebhookUpdateRequest } from "./webhook-schemas";

export const route = defineRoute({
  method: "patch",
  path: "/api/v4/webhooks/{id}",
  auth: "api-key",
  operationId: "updateWebhook",
  summary:
    "Change an endpoint's URL or event types in place; its secret and delivery log stay, and what is still " +
    "pending goes to the new URL",
  tags: ["Webhooks"],
  request: { params: IdParams, body: WebhookUpdateRequest },
  responses: { 200: { description: "The endpoint as it is now", schema: Webhook } },
  errors: [404],
  async handler({ params, body, project }, deps) {
    const endpoint = await deps.webhooks.updateEndpoint({
      projectId: project.projectId,
      endpointId: params.id,
      url: body.url,
      events: body.events && { types: body.events },
    });
    return { body: toWebhook(endpoint) };
  },
});
