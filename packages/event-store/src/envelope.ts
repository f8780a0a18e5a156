/** What a decider emits: a member of a discriminated union, with its payload. */
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

/** Where an event came from and when; stored with it. */
export interface EventMetadata {
  /** Unique id; also the `Nats-Msg-Id`, so a retried append is stored once. */
  id: string;
  aggregateType: string;
  aggregateId: string;
  /** ISO-8601 UTC. */
  occurredAt: string;
  /** W3C trace context of the command that caused the event, when there was one. */
  traceparent?: string;
  /** When one append wrote several events: this event's place among them (projections apply them together). */
  commit?: { index: number; size: number };
}

/** An event as stored: one JetStream message on the subject of its aggregate instance. Distributes over unions. */
export type EventEnvelope<E extends DomainEvent = DomainEvent> = E extends DomainEvent ? E & EventMetadata : never;

/** A stored event with its stream position (global order across all aggregates). */
export type StoredEvent<E extends DomainEvent = DomainEvent> = EventEnvelope<E> & { sequence: number };

export interface AggregateRef {
  type: string;
  id: string;
}
