import { defineRoute } from "../../../http/route";
import { toWebhook, WebhookList } from "./webhook-schemas";

export const route = defineRoute({
  method: "get",
  path: "/api/v4/webhooks",
  auth: "api-key",
  operationId: "listWebhooks",
  summary: "The project's webhook endpoints",
  tags: ["Webhooks"],
  responses: { 200: { description: "The endpoints, oldest first", schema: WebhookList } },
  async handler({ project, signal }, deps) {
    const { endpoints } = await deps.webhooks.listEndpoints({ projectId: project.projectId }, { signal });
    return { body: { webhooks: endpoints.map(toWebhook) } };
  },
});
