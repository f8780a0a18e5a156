import type { Kysely, Transaction } from "kysely";
import type { DomainEvent, StoredEvent } from "./envelope";

/**
 * A read model kept in Postgres from the event stream. `apply` runs in the same transaction that records the
 * stream sequence it reached, so an event is applied exactly once even if the process dies before acking it.
 */
export interface Projection<DB = any, E extends DomainEvent = DomainEvent> {
  /** Unique per deployment; names the checkpoint row and the durable consumer. */
  name: string;
  /** Aggregate types whose events this projection reads (one consumer filter each is not possible on NATS 2.9). */
  aggregateType: string;
  /** The event types it handles; the others only move its checkpoint on (as emmett's `canHandle`). */
  canHandle: readonly E["type"][];
  /** Creates the projection's tables if missing. */
  setup(db: Kysely<DB>): Promise<void>;
  /** Drops the projection's tables; `setup` follows during a rebuild. */
  teardown(db: Kysely<DB>): Promise<void>;
  apply(trx: Transaction<DB>, event: StoredEvent<E>): Promise<void>;
}

/**
 * Does something once per event (stops a browser, publishes work) and keeps no read model. Run by the projection
 * runner, so each event is handled once, in order, by one replica, and a crash before the checkpoint repeats it:
 * `react` must be idempotent.
 */
export interface Reactor<E extends DomainEvent = DomainEvent> {
  /** Unique per deployment; names the checkpoint row and the durable consumer. */
  name: string;
  aggregateType: string;
  /** The event types it reacts to; the others only move its checkpoint on. */
  canHandle: readonly E["type"][];
  react(event: StoredEvent<E>): Promise<void>;
}

/** What the projection runner feeds from the stream. */
export type EventConsumer = Projection<any, any> | Reactor<any>;

const nothing = async () => undefined;

/** A reactor as the projection runner runs it: no tables of its own. */
export function reactorAsProjection<E extends DomainEvent>(reactor: Reactor<E>): Projection<any, E> {
  return {
    name: reactor.name,
    aggregateType: reactor.aggregateType,
    canHandle: reactor.canHandle,
    setup: nothing,
    teardown: nothing,
    apply: (_trx, event) => reactor.react(event),
  };
}
