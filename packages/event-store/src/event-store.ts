import type { AggregateRef, DomainEvent, StoredEvent } from "./envelope";

export interface AppendOptions {
  /** One id per event. Pass the same ids when retrying a command so that JetStream stores each event once. */
  ids?: readonly string[];
  /** When the events happened; defaults to the store's clock. */
  occurredAt?: Date;
  /** W3C trace context stored with the events; by default the active span's. */
  traceparent?: string;
}

export interface AppendResult {
  /** The aggregate's version after the append: the stream sequence of its last event. */
  version: number;
  events: StoredEvent[];
}

export interface LoadedAggregate<E extends DomainEvent> {
  events: StoredEvent<E>[];
  /** Stream sequence of the last event, 0 when the aggregate has none. */
  version: number;
}

/** An append-only log of domain events, one ordered stream per aggregate instance. */
export interface EventStore {
  /**
   * Appends events if the aggregate is still at `expectedVersion` (0 = it has no events yet).
   * @throws ConcurrencyError when another writer got there first.
   */
  append<E extends DomainEvent>(
    aggregate: AggregateRef,
    events: readonly E[],
    expectedVersion: number,
    options?: AppendOptions,
  ): Promise<AppendResult>;
  load<E extends DomainEvent>(aggregate: AggregateRef): Promise<LoadedAggregate<E>>;
  /** The aggregate's current version without reading its events. */
  version(aggregate: AggregateRef): Promise<number>;
  /** Throws unless the store is reachable and accepts writes. */
  checkWritable(): Promise<void>;
}
