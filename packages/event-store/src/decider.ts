import type { DomainEvent, EventEnvelope } from "./envelope";

/** What a command handler knows besides the command: the clock and an id source, injected as data. */
export interface CommandContext {
  now: Date;
  newId(): string;
}

/**
 * A pure decision model: `decide` turns a command into events given the state (or throws a domain error),
 * `evolve` folds one stored event into the state.
 */
export interface Decider<C, E extends DomainEvent, S> {
  initialState(): S;
  evolve(state: S, event: EventEnvelope<E>): S;
  decide(command: C, state: S, context: CommandContext): E[];
}

/** State after a history of events. */
export function fold<E extends DomainEvent, S>(
  decider: Pick<Decider<unknown, E, S>, "initialState" | "evolve">,
  events: readonly EventEnvelope<E>[],
): S {
  return events.reduce(decider.evolve, decider.initialState());
}
