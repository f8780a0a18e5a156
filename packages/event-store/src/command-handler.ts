import { randomUUID } from "node:crypto";
import type { AggregateRef, DomainEvent, EventEnvelope, StoredEvent } from "./envelope";
import type { CommandContext, Decider } from "./decider";
import { fold } from "./decider";
import { ConcurrencyError } from "./errors";
import type { EventStore } from "./event-store";

export interface HandleOptions {
  now?: () => Date;
  newId?: () => string;
  /** Attempts when another writer wins the race; each attempt reloads and decides again. */
  maxAttempts?: number;
  traceparent?: string;
  /**
   * The aggregate's id was made just now, so it has no events: the first attempt decides without reading it, saving
   * a round trip to the store. Were the id taken after all, the append loses the race and the next attempt reads it.
   */
  fresh?: boolean;
}

export interface Handled<E extends DomainEvent, S> {
  state: S;
  /** The events this command appended (none when the decider decided nothing should change). */
  events: StoredEvent<E>[];
  version: number;
}

/** Load, decide, append; on a lost race, do it again from the new state. */
export async function handleCommand<C, E extends DomainEvent, S>(
  store: EventStore,
  decider: Decider<C, E, S>,
  aggregate: AggregateRef,
  command: C,
  options: HandleOptions = {},
): Promise<Handled<E, S>> {
  const maxAttempts = options.maxAttempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    const loaded = attempt === 1 && options.fresh ? { events: [], version: 0 } : await store.load<E>(aggregate);
    const before = fold(decider, loaded.events as EventEnvelope<E>[]);
    const context: CommandContext = { now: options.now?.() ?? new Date(), newId: options.newId ?? randomUUID };
    const decided = decider.decide(command, before, context);
    if (decided.length === 0) return { state: before, events: [], version: loaded.version };
    try {
      const result = await store.append(aggregate, decided, loaded.version, {
        occurredAt: context.now,
        traceparent: options.traceparent,
      });
      const stored = result.events as StoredEvent<E>[];
      return { state: stored.reduce(decider.evolve, before), events: stored, version: result.version };
    } catch (err) {
      if (!(err instanceof ConcurrencyError) || attempt >= maxAttempts) throw err;
    }
  }
}
