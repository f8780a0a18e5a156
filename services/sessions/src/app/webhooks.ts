import { randomBytes } from "node:crypto";
import { InvalidArgumentError, NotFoundError } from "@bas/errors";
import type { WebhookDeliveryRecord, WebhookEndpointRecord, WebhookStore } from "./ports";

export interface WebhooksDeps {
  store: WebhookStore;
  /** Why an endpoint URL may not be used (a closed address), or undefined. */
  refusal(url: URL): Promise<string | undefined>;
}

const MAX_ENDPOINTS = 20;
const notFound = () => new NotFoundError("Webhook not found");
const invalidUrl = (message: string) => new InvalidArgumentError(message, { field: ["body", "url"] });

/** A project's webhook endpoints: registered with a secret of their own, checked against the egress policy. */
export function createWebhooks(deps: WebhooksDeps) {
  return {
    async create(projectId: string, raw: string): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw invalidUrl("url must be an absolute http or https URL");
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") throw invalidUrl("url must be an http or https URL");
      if (url.username || url.password) throw invalidUrl("url must not carry a user name or password");
      const refused = await deps.refusal(url);
      if (refused) throw invalidUrl(`url cannot be used: ${refused}`);
      if ((await deps.store.listEndpoints(projectId)).length >= MAX_ENDPOINTS) {
        throw invalidUrl(`a project has at most ${MAX_ENDPOINTS} webhook endpoints; delete one first`);
      }
      const secret = `whsec_${randomBytes(32).toString("base64url")}`;
      const endpoint = await deps.store.createEndpoint(projectId, url.toString(), secret, {
        key: "test",
        type: "test",
        payload: { test: "ok" },
      });
      return { endpoint, secret };
    },

    list: (projectId: string) => deps.store.listEndpoints(projectId),

    async remove(projectId: string, endpointId: string): Promise<void> {
      if (!(await deps.store.deleteEndpoint(projectId, endpointId))) throw notFound();
    },

    async deliveries(projectId: string, endpointId: string, limit: number): Promise<WebhookDeliveryRecord[]> {
      const found = await deps.store.listDeliveries(projectId, endpointId, limit);
      if (!found) throw notFound();
      return found;
    },
  };
}

export type Webhooks = ReturnType<typeof createWebhooks>;
