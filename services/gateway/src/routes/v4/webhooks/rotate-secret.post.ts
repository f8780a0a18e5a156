import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import { CreatedWebhook, toWebhook } from "./webhook-schemas";

export const route = defineRoute({
  method: "post",
  path: "/api/v4/webhooks/{id}/rotate-secret",
  auth: "api-key",
  operationId: "rotateWebhookSecret",
  summary:
    "Give an endpoint a new signing secret, shown only in this answer; the old one signs nothing from now on " +
    "(deliveries that fail meanwhile are tried again, signed anew)",
  tags: ["Webhooks"],
  request: { params: IdParams },
  responses: { 200: { description: "The endpoint and its new secret", schema: CreatedWebhook } },
  errors: [404],
  async handler({ params, project }, deps) {
    const rotated = await deps.webhooks.rotateSecret({ projectId: project.projectId, endpointId: params.id });
    return { body: { ...toWebhook(rotated.endpoint), secret: rotated.secret } };
  },
});
