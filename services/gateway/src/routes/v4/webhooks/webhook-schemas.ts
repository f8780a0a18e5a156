import type { webhooks } from "@bas/proto";
import { z } from "zod";
import { DateTime, queryInt, Uuid } from "../../../schemas/common";

/** The event types an endpoint may choose (sessions' CHOOSABLE_WEBHOOK_EVENTS checks them again). */
const WebhookEventType = z.enum(["agent.task.status_update", "run.status_update"]).meta({ id: "WebhookEventType" });
const Events = z.array(WebhookEventType);

const Url = z
  .string()
  .min(1)
  .max(2_000)
  .describe(
    "Where status changes are POSTed (http or https). Loopback, private and link-local addresses are refused " +
      "unless the operator opened them (WEBHOOK_EGRESS_ALLOW).",
  );

export const WebhookCreateRequest = z
  .strictObject({
    url: Url,
    events: Events.max(10)
      .optional()
      .describe("The event types to get; left out or empty, every type. The test event comes once either way."),
  })
  .meta({ id: "WebhookCreateRequest" });

export const WebhookUpdateRequest = z
  .strictObject({
    url: Url.optional().describe(
      "A new address, checked as at registration; it gets a test event and what is still pending, at once.",
    ),
    events: Events.max(10).optional().describe("The event types to get from now on; empty: every type."),
  })
  .refine((body) => body.url !== undefined || body.events !== undefined, "give url, events or both")
  .meta({ id: "WebhookUpdateRequest" });

const endpointFields = {
  id: Uuid,
  url: z.string(),
  createdAt: DateTime,
  events: Events.describe("The event types it gets; empty: every type."),
};

export const Webhook = z.object(endpointFields).meta({ id: "Webhook" });

export const CreatedWebhook = z
  .object({
    ...endpointFields,
    secret: z.string().describe("The HMAC-SHA256 key of X-Browser-Use-Signature; shown only in this answer, keep it."),
  })
  .meta({ id: "CreatedWebhook" });

export const DeliveryParams = z.object({
  id: Uuid.describe("The endpoint's id."),
  deliveryId: Uuid.describe("The delivery's id, from the endpoint's delivery log."),
});

export const WebhookList = z.object({ webhooks: z.array(Webhook) }).meta({ id: "WebhookListResponse" });

export const WebhookDelivery = z
  .object({
    id: Uuid,
    eventType: z.string().describe("agent.task.status_update, run.status_update or test"),
    state: z.enum(["pending", "delivered", "failed"]).describe("failed: given up after a day of retries"),
    attempts: z.int().describe("Attempts since it was created, or since it was last resent"),
    lastStatus: z.int().nullable().describe("The endpoint's last HTTP status"),
    lastError: z.string().nullable().describe("Why the last attempt did not succeed"),
    createdAt: DateTime,
    nextAttemptAt: DateTime.nullable(),
    deliveredAt: DateTime.nullable(),
    body: z.string().describe("The JSON body as sent"),
  })
  .meta({ id: "WebhookDelivery" });

export const WebhookDeliveryList = z
  .object({ deliveries: z.array(WebhookDelivery) })
  .meta({ id: "WebhookDeliveryListResponse" });

export const DeliveriesQuery = z.object({
  limit: queryInt({ min: 1, max: 200, default: 50, description: "Deliveries to show, newest first (at most 200)." }),
});

const iso = (d: Date | undefined) => (d ?? new Date(0)).toISOString();

export const toWebhook = (e: webhooks.Endpoint | undefined): z.input<typeof Webhook> => ({
  id: e?.id ?? "",
  url: e?.url ?? "",
  createdAt: iso(e?.createdAt),
  events: (e?.events ?? []) as z.input<typeof Events>,
});

export const toDelivery = (d: webhooks.Delivery): z.input<typeof WebhookDelivery> => ({
  id: d.id,
  eventType: d.eventType,
  state: d.state as "pending" | "delivered" | "failed",
  attempts: d.attempts,
  lastStatus: d.lastStatus ?? null,
  lastError: d.lastError ?? null,
  createdAt: iso(d.createdAt),
  nextAttemptAt: d.nextAttemptAt ? d.nextAttemptAt.toISOString() : null,
  deliveredAt: d.deliveredAt ? d.deliveredAt.toISOString() : null,
  body: d.body,
});
