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
  /** Creates the projection's tables if missing. */
  setup(db: Kysely<DB>): Promise<void>;
  /** Drops the projection's tables; `setup` follows during a rebuild. */
  teardown(db: Kysely<DB>): Promise<void>;
  apply(trx: Transaction<DB>, event: StoredEvent<E>): Promise<void>;
}
