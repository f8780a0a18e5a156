import { defineRoute } from "../../../http/route";
import { CreatedWebhook, toWebhook, WebhookCreateRequest } from "./webhook-schemas";

export const route = defineRoute({
  method: "post",
  path: "/api/v4/webhooks",
  auth: "api-key",
  operationId: "createWebhook",
  summary:
    "Register an endpoint for the status changes of the project's v3 tasks and v4 runs (every type, or the ones it " +
    "chooses), signed with the secret this answer holds (a test event is sent to it first)",
  tags: ["Webhooks"],
  request: { body: WebhookCreateRequest },
  responses: { 200: { description: "The endpoint and its secret", schema: CreatedWebhook } },
  async handler({ body, project }, deps) {
    const created = await deps.webhooks.createEndpoint({
      projectId: project.projectId,
      url: body.url,
      events: body.events ?? [],
    });
    return { body: { ...toWebhook(created.endpoint), secret: created.secret } };
  },
});
