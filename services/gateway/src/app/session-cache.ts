import type { NatsConnection } from "@nats-io/transport-node";
import type { StreamNames } from "@bas/event-store";
import type { sessions } from "@bas/proto";

type Session = sessions.Session;

export interface SessionCache {
  /** The cached session of this project, or what `load` answers (cached unless it changed meanwhile). */
  get(projectId: string, sessionId: string, load: () => Promise<Session>): Promise<Session>;
  /** Forget a session now (this gateway just changed it). */
  invalidate(sessionId: string): void;
  close(): Promise<void>;
}

export interface SessionCacheOptions {
  nc: NatsConnection;
  streams: StreamNames;
  /** Upper bound on staleness should a change notice ever be missed. */
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}

/**
 * Single-session reads are what clients poll. They are served from memory and dropped the moment the sessions
 * service announces that the session's read model changed (core NATS, after its commit), so a poll costs no gRPC
 * call while nothing happens. A load that overlaps a change notice is not cached (generation check), and a NATS
 * disconnect clears everything, since notices may have been missed.
 */
export function createSessionCache(options: SessionCacheOptions): SessionCache {
  const { nc, streams, ttlMs, maxEntries } = options;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { projectId: string; session: Session; expiresAt: number }>();
  const generations = new Map<string, number>();
  let epoch = 0;

  function invalidate(sessionId: string) {
    entries.delete(sessionId);
    generations.set(sessionId, (generations.get(sessionId) ?? 0) + 1);
    if (generations.size > maxEntries * 2) {
      // Bounded memory: forgetting generations is safe once loads already under way are not cached (new epoch).
      generations.clear();
      epoch++;
    }
  }

  const subscription = nc.subscribe(streams.changes.ofType("session"), {
    callback: (err, msg) => {
      if (err) return;
      invalidate(msg.subject.slice(msg.subject.lastIndexOf(".") + 1));
    },
  });
  const watching = (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect" || status.type === "reconnect") {
        entries.clear();
        epoch++;
      }
    }
  })();

  return {
    async get(projectId, sessionId, load) {
      const hit = entries.get(sessionId);
      if (hit && hit.projectId === projectId && hit.expiresAt > now()) return hit.session;
      const generation = generations.get(sessionId) ?? 0;
      const startedIn = epoch;
      const session = await load();
      if ((generations.get(sessionId) ?? 0) === generation && epoch === startedIn) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
        entries.set(sessionId, { projectId, session, expiresAt: now() + ttlMs });
      }
      return session;
    },
    invalidate,
    async close() {
      subscription.unsubscribe();
      entries.clear();
      void watching;
    },
  };
}
