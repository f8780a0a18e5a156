import { ConcurrencyError, type StoredEvent } from "@bas/event-store";
import {
  decideLedger,
  evolveLedger,
  initialLedgerState,
  type LedgerCommand,
  type LedgerState,
} from "../domain/decider";
import type { LedgerEvent, LedgerType } from "../domain/events";
import { deterministicId } from "./event-ids";
import type { LedgerStore } from "./ports";

export interface LedgerSnapshot {
  state: LedgerState;
  version: number;
}

export interface Ledgers {
  /**
   * Decides the commands in order against the ledger and appends what they decided in one expected-version append.
   * Another writer winning the race means a reload and new decisions, so no two charges apply to the same total.
   */
  handle(
    type: LedgerType,
    id: string,
    commands: readonly LedgerCommand[],
  ): Promise<LedgerSnapshot & { events: StoredEvent<LedgerEvent>[] }>;
  /** The ledger as stored now (one lookup; never a cached copy, since another replica may have written). */
  read(type: LedgerType, id: string): Promise<LedgerSnapshot>;
}

const MAX_ATTEMPTS = 8;

/**
 * Command handling for ledgers with a cache of the states this process wrote: the usage consumer charges the same
 * session and project ledgers over and over, and an append at a stale version just fails and reloads.
 */
export function createLedgers(deps: { store: LedgerStore; cacheSize?: number }): Ledgers {
  const { store } = deps;
  const cacheSize = deps.cacheSize ?? 20_000;
  const cache = new Map<string, LedgerSnapshot>();

  function remember(key: string, snapshot: LedgerSnapshot) {
    cache.delete(key);
    cache.set(key, snapshot);
    if (cache.size > cacheSize) cache.delete(cache.keys().next().value as string);
  }

  async function read(type: LedgerType, id: string): Promise<LedgerSnapshot> {
    const { event, version } = await store.last(type, id);
    return { state: event ? evolveLedger(initialLedgerState(), event) : initialLedgerState(), version };
  }

  function eventIds(type: LedgerType, id: string, events: LedgerEvent[], version: number): string[] {
    return events.map((event, i) =>
      event.type === "ChargeRecorded"
        ? deterministicId(`charge/${type}/${id}/${event.data.usageId}`)
        : // The content is part of the key: a different decision at the same version must not pass for this one.
          deterministicId(`${type}/${id}/${version}/${i}/${JSON.stringify(event)}`),
    );
  }

  async function handle(type: LedgerType, id: string, commands: readonly LedgerCommand[]) {
    const key = `${type}/${id}`;
    for (let attempt = 1; ; attempt++) {
      const current = cache.get(key) ?? (await read(type, id));
      const decided: LedgerEvent[] = [];
      let state = current.state;
      for (const command of commands) {
        for (const event of decideLedger(command, state)) {
          decided.push(event);
          state = evolveLedger(state, event);
        }
      }
      if (decided.length === 0) {
        remember(key, current);
        return { ...current, events: [] };
      }
      try {
        const ids = eventIds(type, id, decided, current.version);
        const result = await store.append(type, id, decided, current.version, ids);
        const snapshot = { state, version: result.version };
        remember(key, snapshot);
        return { ...snapshot, events: result.events };
      } catch (err) {
        cache.delete(key);
        if (!(err instanceof ConcurrencyError) || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  }

  return { handle, read };
}
