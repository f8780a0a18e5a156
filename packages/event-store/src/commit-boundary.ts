import type { StoredEvent } from "./envelope";

/**
 * A batch's events by stream sequence, each once: a message redelivered (its ack was late) can arrive in the same
 * batch as itself, or after later ones.
 */
export function inOrder(events: readonly StoredEvent[]): StoredEvent[] {
  return [...new Map(events.map((e) => [e.sequence, e])).values()].sort((a, b) => a.sequence - b.sequence);
}

/**
 * Whether some append has only its first events among those of the batch after `applied`. Appends of different
 * aggregates interleave in the stream (each publishes its events one by one), so each aggregate's last event is
 * checked, not only the batch's last. An event at or below `applied` is a late redelivery: its append was applied
 * whole before, and the rest of it may never come again (acked in time), so it leaves nothing open.
 */
export function endsMidCommit(events: readonly StoredEvent[], applied: number): boolean {
  const fresh = inOrder(events).filter((e) => e.sequence > applied);
  const lastOfAggregate = new Map(fresh.map((e) => [`${e.aggregateType}/${e.aggregateId}`, e]));
  return [...lastOfAggregate.values()].some((e) => !!e.commit && e.commit.index < e.commit.size - 1);
}
