import type { NatsConnection } from "@nats-io/transport-node";
import type { StreamNames } from "@bas/event-store";
import type { SessionChangeKind } from "@bas/proto";

/** What a load answers: the value, the session whose change notices make it stale, and whether it may be kept. */
export interface Loaded<T> {
  value: T;
  sessionId: string;
  /** False for an answer that will change without a change notice (a run waiting for its final costs). */
  cacheable?: boolean;
  /** True for an answer that never changes again (a run that ended): kept without the time limit. */
  final?: boolean;
}

export interface ReadCache<T> {
  /** The cached value of this project under `key`, or what `load` answers (cached unless it changed meanwhile). */
  get(projectId: string, key: string, load: () => Promise<Loaded<T>>): Promise<T>;
  /** Forget everything read from this session now (this gateway just changed it). */
  invalidate(sessionId: string): void;
  close(): Promise<void>;
}

export interface ReadCacheOptions {
  nc: NatsConnection;
  streams: StreamNames;
  /** The read models what is cached comes from: their change notices drop it. */
  kinds: readonly SessionChangeKind[];
  /**
   * Upper bound on staleness should a change notice ever be missed (one is lost if its sender dies before sending);
   * 0 keeps nothing.
   */
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}

interface Entry<T> {
  projectId: string;
  sessionId: string;
  value: T;
  expiresAt: number;
}

/**
 * What clients poll (a session, a run's status) is served from memory and dropped the moment the sessions service
 * announces that the session's read models changed (core NATS, after their commit), so a poll costs no gRPC call
 * while nothing happens. A load that overlaps a notice about its session is not kept (each notice takes a number;
 * a load remembers the number it started after), and a NATS disconnect clears everything, since notices may have
 * been missed.
 */
export function createReadCache<T>(options: ReadCacheOptions): ReadCache<T> {
  const { nc, streams, kinds, ttlMs, maxEntries } = options;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry<T>>();
  const keysOfSession = new Map<string, Set<string>>();
  /** The number of the last notice about each session; `notices` counts them all. */
  const lastNotice = new Map<string, number>();
  let notices = 0;
  let epoch = 0;

  function drop(key: string) {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    const keys = keysOfSession.get(entry.sessionId);
    keys?.delete(key);
    if (keys?.size === 0) keysOfSession.delete(entry.sessionId);
  }

  function clear() {
    entries.clear();
    keysOfSession.clear();
    lastNotice.clear();
    // Loads under way started before what was forgotten: none of them is kept.
    epoch++;
  }

  function invalidate(sessionId: string) {
    for (const key of keysOfSession.get(sessionId) ?? []) entries.delete(key);
    keysOfSession.delete(sessionId);
    // Bounded memory: forgetting the notice numbers is safe once loads already under way are not kept (new epoch).
    if (lastNotice.size >= maxEntries * 2) {
      lastNotice.clear();
      epoch++;
    }
    lastNotice.set(sessionId, ++notices);
  }

  function keep(projectId: string, key: string, { value, sessionId, final }: Loaded<T>) {
    drop(key);
    if (entries.size >= maxEntries) drop(entries.keys().next().value as string);
    entries.set(key, { projectId, sessionId, value, expiresAt: final ? Number.POSITIVE_INFINITY : now() + ttlMs });
    const keys = keysOfSession.get(sessionId) ?? new Set<string>();
    keys.add(key);
    keysOfSession.set(sessionId, keys);
  }

  const subscriptions = kinds.map((kind) =>
    nc.subscribe(streams.changes.ofType(kind), {
      callback: (err, msg) => {
        if (!err) invalidate(msg.subject.slice(msg.subject.lastIndexOf(".") + 1));
      },
    }),
  );
  const watching = (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect" || status.type === "reconnect") clear();
    }
  })();

  return {
    async get(projectId, key, load) {
      const hit = entries.get(key);
      if (hit && hit.projectId === projectId && hit.expiresAt > now()) return hit.value;
      const startedAfter = notices;
      const startedIn = epoch;
      const loaded = await load();
      const changedMeanwhile = (lastNotice.get(loaded.sessionId) ?? 0) > startedAfter;
      if (ttlMs > 0 && loaded.cacheable !== false && !changedMeanwhile && epoch === startedIn)
        keep(projectId, key, loaded);
      return loaded.value;
    },
    invalidate,
    async close() {
      for (const subscription of subscriptions) subscription.unsubscribe();
      clear();
      void watching;
    },
  };
}
