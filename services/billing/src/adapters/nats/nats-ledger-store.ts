import { type EventStore, EventStoreUnavailableError, type StoredEvent, type StreamNames } from "@bas/event-store";
import type { JetStreamManager } from "@nats-io/jetstream";
import type { LedgerStore } from "../../app/ports";
import type { LedgerEvent } from "../../domain/events";

/**
 * Ledgers on the shared event store. Reads fetch only the subject's last message (a ledger's last event is its
 * state), so a read costs one direct get however many charges the ledger holds; writes go through the event store's
 * expected-version append.
 */
export function createNatsLedgerStore(deps: {
  store: EventStore;
  jsm: JetStreamManager;
  streams: StreamNames;
}): LedgerStore {
  const { store, jsm, streams } = deps;
  return {
    async last(type, id) {
      try {
        const m = await jsm.streams.getMessage(streams.events.stream, {
          last_by_subj: streams.events.subject(type, id),
        });
        if (!m) return { version: 0 };
        return { event: { ...(m.json() as object), sequence: m.seq } as StoredEvent<LedgerEvent>, version: m.seq };
      } catch (err) {
        // A ledger without events is not an error: getMessage answers null for it.
        throw new EventStoreUnavailableError(`could not read ledger ${type}/${id}`, { cause: err });
      }
    },
    async append(type, id, events, expectedVersion, ids) {
      const result = await store.append({ type, id }, events, expectedVersion, { ids });
      return { version: result.version, events: result.events as StoredEvent<LedgerEvent>[] };
    },
  };
}
