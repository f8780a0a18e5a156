import type { StreamNames } from "@bas/event-store";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { PublishUsage } from "../../app/ports";

/** Publishes a UsageRecorded (JSON) on `<ns>.usage.<kind>`; the usage id is the message id, so a retry is stored once. */
export function createUsagePublisher(js: JetStreamClient, streams: StreamNames): PublishUsage {
  return async ({ kind, id, payload }) => {
    await js.publish(streams.usage.subject(kind), JSON.stringify(payload), { msgID: id });
  };
}
