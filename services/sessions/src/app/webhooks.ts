import { randomBytes, randomUUID } from "node:crypto";
import { IllegalStateError, InvalidArgumentError, NotFoundError } from "@bas/errors";
import { CHOOSABLE_WEBHOOK_EVENTS } from "../domain/webhook-events";
import type { WebhookDeliveryRecord, WebhookEndpointRecord, WebhookStore } from "./ports";

export interface WebhooksDeps {
  store: WebhookStore;
  /** Why an endpoint URL may not be used (a closed address), or undefined. */
  refusal(url: URL): Promise<string | undefined>;
}

const MAX_ENDPOINTS = 20;
const notFound = () => new NotFoundError("Webhook not found");
const newSecret = () => `whsec_${randomBytes(32).toString("base64url")}`;
const invalidUrl = (message: string) => new InvalidArgumentError(message, { field: ["body", "url"] });
const TEST_PAYLOAD = { test: "ok" };

/** The URL as stored, if an endpoint may use it. */
async function checkedUrl(raw: string, refusal: WebhooksDeps["refusal"]): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidUrl("url must be an absolute http or https URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalidUrl("url must be an http or https URL");
  if (url.username || url.password) throw invalidUrl("url must not carry a user name or password");
  const refused = await refusal(url);
  if (refused) throw invalidUrl(`url cannot be used: ${refused}`);
  return url.toString();
}

/** The event types chosen, each once; an unknown one is refused by name. */
function chosenEvents(events: readonly string[]): string[] {
  const unknown = events.find((type) => !(CHOOSABLE_WEBHOOK_EVENTS as readonly string[]).includes(type));
  if (unknown !== undefined) {
    throw new InvalidArgumentError(
      `events: ${JSON.stringify(unknown)} is not an event type; choose from ${CHOOSABLE_WEBHOOK_EVENTS.join(", ")}`,
      { field: ["body", "events"] },
    );
  }
  return [...new Set(events)];
}

/** A project's webhook endpoints: registered with a secret of their own, checked against the egress policy. */
export function createWebhooks(deps: WebhooksDeps) {
  const usableUrl = (raw: string) => checkedUrl(raw, deps.refusal);
  return {
    async create(
      projectId: string,
      raw: string,
      events: readonly string[] = [],
    ): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
      const chosen = chosenEvents(events);
      const url = await usableUrl(raw);
      const secret = newSecret();
      const endpoint = await deps.store.createEndpoint(
        { projectId, url, secret, events: chosen, maxEndpoints: MAX_ENDPOINTS },
        { key: "test", type: "test", payload: TEST_PAYLOAD },
      );
      if (!endpoint) throw invalidUrl(`a project has at most ${MAX_ENDPOINTS} webhook endpoints; delete one first`);
      return { endpoint, secret };
    },

    async update(
      projectId: string,
      endpointId: string,
      change: { url?: string; events?: readonly string[] },
    ): Promise<WebhookEndpointRecord> {
      if (change.url === undefined && change.events === undefined) {
        throw new InvalidArgumentError("give url, events or both", { field: ["body"] });
      }
      const events = change.events && chosenEvents(change.events);
      const url = change.url === undefined ? undefined : await usableUrl(change.url);
      const updated = await deps.store.updateEndpoint(
        projectId,
        endpointId,
        { url, events },
        { key: `test/${randomUUID()}`, type: "test", payload: TEST_PAYLOAD },
      );
      if (!updated) throw notFound();
      return updated;
    },

    async rotateSecret(
      projectId: string,
      endpointId: string,
    ): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
      const secret = newSecret();
      const endpoint = await deps.store.rotateSecret(projectId, endpointId, secret);
      if (!endpoint) throw notFound();
      return { endpoint, secret };
    },

    async resend(projectId: string, endpointId: string, deliveryId: string): Promise<WebhookDeliveryRecord> {
      const resent = await deps.store.resendDelivery(projectId, endpointId, deliveryId);
      if (resent === undefined) throw new NotFoundError("Webhook delivery not found");
      if (resent === "pending") {
        throw new IllegalStateError(
          "This delivery is still pending: it is tried again on its own; resend it once it has failed",
        );
      }
      return resent;
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
