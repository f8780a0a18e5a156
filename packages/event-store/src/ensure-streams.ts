import { type JetStreamManager, RetentionPolicy, StorageType, type StreamConfig } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import type { StreamNames } from "./streams";

const DUPLICATE_WINDOW = nanos(2 * 60 * 1000);

/** Creates the deployment's streams, or brings their configuration up to date. Safe to call from every service. */
export async function ensureStreams(jsm: JetStreamManager, streams: StreamNames, replicas = 1): Promise<void> {
  const configs: Partial<StreamConfig>[] = [
    { name: streams.events.stream, subjects: [streams.events.subjects], duplicate_window: DUPLICATE_WINDOW },
    {
      name: streams.work.stream,
      subjects: [streams.work.subjects],
      retention: RetentionPolicy.Workqueue,
      duplicate_window: DUPLICATE_WINDOW,
    },
    { name: streams.usage.stream, subjects: [streams.usage.subjects], duplicate_window: DUPLICATE_WINDOW },
    { name: streams.health.stream, subjects: [streams.health.subject], max_msgs: 1 },
  ];
  for (const config of configs) {
    const full = { storage: StorageType.File, num_replicas: replicas, ...config } as StreamConfig;
    try {
      await jsm.streams.info(full.name);
      await jsm.streams.update(full.name, full);
    } catch {
      await jsm.streams.add(full);
    }
  }
}
