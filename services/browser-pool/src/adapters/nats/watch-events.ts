import type { StreamNames } from "@bas/event-store";
import type { NatsConnection } from "@nats-io/transport-node";

/**
 * Calls `react` with the aggregate's id for each event of `aggregateType` among `types`, as any node stores it. Core
 * NATS, no consumer: only what is stored while this node listens, and a message can be missed; callers allow for it.
 */
export function watchEvents(
  nc: NatsConnection,
  streams: StreamNames,
  aggregateType: string,
  types: readonly string[],
  react: (aggregateId: string) => void,
): { close(): void } {
  const sub = nc.subscribe(streams.events.ofType(aggregateType), {
    callback: (err, msg) => {
      if (err) return;
      let event: { type?: string; aggregateId?: string };
      try {
        event = msg.json();
      } catch {
        return; // Not an event envelope: nothing to do.
      }
      if (event.type && event.aggregateId && types.includes(event.type)) react(event.aggregateId);
    },
  });
  return { close: () => sub.unsubscribe() };
}
