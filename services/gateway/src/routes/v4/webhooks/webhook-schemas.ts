import type { webhooks } from "@bas/proto";
import { z } from "zod";
import { DateTime, queryInt, Uuid } from "../../../schemas/common";

export const WebhookCreateRequest = z
  .strictObject({
    url: z
      .string()
      .min(1)
      .max(2_000)
      .describe(
        "Where status changes are POSTed (http or https). Loopback, private and link-local addresses are refused " +
          "unless the operator opened them (WEBHOOK_EGRESS_ALLOW).",
      ),
  })
  .meta({ id: "WebhookCreateRequest" });

export const Webhook = z.object({ id: Uuid, url: z.string(), createdAt: DateTime }).meta({ id: "Webhook" });

export const CreatedWebhook = z
  .object({
    id: Uuid,
    url: z.string(),
    createdAt: DateTime,
    secret: z.string().describe("The HMAC-SHA256 key of X-Browser-Use-Signature; shown only in this answer, keep it."),
  })
  .meta({ id: "CreatedWebhook" });

export const WebhookList = z.object({ webhooks: z.array(Webhook) }).meta({ id: "WebhookListResponse" });

export const WebhookDelivery = z
  .object({
    id: Uuid,
    eventType: z.string().describe("agent.task.status_update, run.status_update or test"),
    state: z.enum(["pending", "delivered", "failed"]).describe("failed: given up after a day of retries"),
    attempts: z.int(),
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
