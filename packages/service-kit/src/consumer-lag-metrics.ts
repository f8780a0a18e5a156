import type { JetStreamManager } from "@nats-io/jetstream";
import { Gauge, type Registry } from "prom-client";

/** A durable JetStream consumer a service owns. */
export interface ConsumerRef {
  stream: string;
  name: string;
}

/**
 * `bas_jetstream_consumer_lag_messages{stream,consumer,state}`: per durable consumer, the messages not delivered yet
 * (`pending`) and those delivered but not acknowledged (`ack_pending`); their sum is how far the consumer is behind.
 * Read from JetStream when Prometheus scrapes, one consumer-info request per consumer, so the figure is the server's
 * and costs nothing between scrapes. A consumer that cannot be read (NATS down, consumer being recreated) has no
 * sample in that scrape rather than a stale one.
 */
export function registerConsumerLag(registry: Registry): (jsm: JetStreamManager, consumers: ConsumerRef[]) => void {
  const watched: { jsm: JetStreamManager; ref: ConsumerRef }[] = [];
  new Gauge({
    name: "bas_jetstream_consumer_lag_messages",
    help: "Messages a durable JetStream consumer has not delivered (pending) or not had acknowledged (ack_pending).",
    labelNames: ["stream", "consumer", "state"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      await Promise.all(
        watched.map(async ({ jsm, ref }) => {
          const info = await jsm.consumers.info(ref.stream, ref.name).catch(() => undefined);
          if (!info) return;
          const labels = { stream: ref.stream, consumer: ref.name };
          this.set({ ...labels, state: "pending" }, info.num_pending);
          this.set({ ...labels, state: "ack_pending" }, info.num_ack_pending);
        }),
      );
    },
  });
  return (jsm, consumers) => {
    for (const ref of consumers) watched.push({ jsm, ref });
  };
}
