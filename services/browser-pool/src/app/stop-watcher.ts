import type { StreamNames } from "@bas/event-store";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { BrowserPool } from "./browser-pool";

/**
 * Tears down this node's browsers that another node recorded as stopped (a stop call or a session's end handled
 * elsewhere). Core NATS is enough: a missed message only delays the tear-down until the browser's own timeout.
 */
export function watchForeignStops(nc: NatsConnection, streams: StreamNames, pool: BrowserPool): { close(): void } {
  const sub: Subscription = nc.subscribe(streams.events.ofType("browser"), {
    callback: (err, msg) => {
      if (err) return;
      try {
        const event = msg.json<{ type: string; aggregateId: string; occurredAt: string }>();
        if (event.type === "BrowserStopped" && pool.live.has(event.aggregateId)) {
          pool.tearDown(event.aggregateId, new Date(event.occurredAt));
        }
      } catch {
        // Not an event envelope: nothing to do.
      }
    },
  });
  return { close: () => sub.unsubscribe() };
}
