import { backoffDelay } from "@bas/service-kit";
import { webhookSignature } from "../domain/webhook-events";
import type { DueDelivery, WebhookStore } from "./ports";

/** The headers of a delivery: the hosted service's names, so receivers written for it verify ours unchanged. */
export const SIGNATURE_HEADER = "X-Browser-Use-Signature";
export const TIMESTAMP_HEADER = "X-Browser-Use-Timestamp";

export interface WebhookSenderOptions {
  store: WebhookStore;
  post(url: string, body: string, headers: Record<string, string>): Promise<{ status: number } | { error: string }>;
  /**
   * First retry after this long, doubling up to `retryMaxMs`, until `retryForMs` after the event (or its resend):
   * then it failed.
   */
  retryBaseMs: number;
  retryMaxMs: number;
  retryForMs: number;
  pollMs: number;
  now?: () => Date;
  log: { warn(o: object, msg: string): void };
}

/**
 * Works through the outbox: claims what is due, POSTs each delivery signed with its endpoint's secret, and records
 * the outcome (a 2xx is delivered; anything else is tried again with backoff for a day, then failed). It runs apart
 * from everything else, so a slow or dead endpoint never holds up a run.
 */
export function startWebhookSender(options: WebhookSenderOptions) {
  const { store, log } = options;
  const now = options.now ?? (() => new Date());
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  async function deliver(d: DueDelivery) {
    const timestamp = Math.floor(now().getTime() / 1000);
    const result = await options.post(d.url, d.body, {
      [SIGNATURE_HEADER]: webhookSignature(d.secret, timestamp, d.body),
      [TIMESTAMP_HEADER]: String(timestamp),
      "User-Agent": "bas-webhooks/1",
    });
    const status = "status" in result ? result.status : undefined;
    const error =
      "error" in result ? result.error : status !== undefined && status >= 300 ? `HTTP ${status}` : undefined;
    if (status !== undefined && status >= 200 && status < 300) {
      return store.recordAttempt(d.id, { kind: "delivered", status });
    }
    const retryAt = new Date(
      now().getTime() + backoffDelay(d.attempts + 1, { initialMs: options.retryBaseMs, maxMs: options.retryMaxMs }),
    );
    const expired = retryAt.getTime() - d.since.getTime() > options.retryForMs;
    await store.recordAttempt(
      d.id,
      expired ? { kind: "failed", status, error } : { kind: "retry", retryAt, status, error },
    );
  }

  async function tick() {
    try {
      for (;;) {
        const due = await store.claimDue(20, 60_000);
        await Promise.all(
          due.map((d) => deliver(d).catch((err) => log.warn({ err, delivery: d.id }, "webhook delivery not recorded"))),
        );
        if (due.length < 20 || stopped) break;
      }
    } catch (err) {
      log.warn({ err }, "webhook deliveries could not be read; trying again");
    }
    if (!stopped) timer = setTimeout(() => (running = tick()), options.pollMs);
  }
  running = tick();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
