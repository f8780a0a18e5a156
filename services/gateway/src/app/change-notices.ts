import type { NatsConnection } from "@nats-io/transport-node";
import type { StreamNames } from "@bas/event-store";
import { SESSION_CHANGE_KINDS, type SessionChangeKind } from "@bas/proto";

/** Watches one session's change notices of one kind; `stop` when done. */
export interface SessionWatch {
  /** Notices seen so far. */
  readonly count: number;
  /**
   * Resolves true once more than `seen` notices came (at once if they already did), false after `timeoutMs` without
   * one, or when `signal` aborts.
   */
  changed(seen: number, timeoutMs: number, signal: AbortSignal): Promise<boolean>;
  stop(): void;
}

export interface ChangeNotices {
  /** Notices that `kind` of read model changed for the session: a stream wakes only for what it reads. */
  watch(kind: SessionChangeKind, sessionId: string): SessionWatch;
  close(): void;
}

/**
 * The sessions service announces on core NATS each time a session's read models committed a change. Streams that
 * push a session's news (SSE) wait on these instead of polling; read `count` before reading the read model, then
 * wait with it, and no notice can slip between the two. A NATS reconnect wakes every watcher (notices may have been
 * lost), and the watcher's own timeout bounds how stale a missed notice can leave it.
 */
export function createChangeNotices(nc: NatsConnection, streams: StreamNames): ChangeNotices {
  const watchers = new Map<string, Set<{ bump(): void }>>();
  const bumpAll = (key?: string) => {
    const targets = key ? [watchers.get(key)] : [...watchers.values()];
    for (const set of targets) for (const w of set ?? []) w.bump();
  };
  const subscriptions = Object.values(SESSION_CHANGE_KINDS).map((kind) =>
    nc.subscribe(streams.changes.ofType(kind), {
      callback: (err, msg) => {
        if (!err) bumpAll(`${kind}.${msg.subject.slice(msg.subject.lastIndexOf(".") + 1)}`);
      },
    }),
  );
  const watching = (async () => {
    for await (const status of nc.status()) if (status.type === "reconnect") bumpAll();
  })();

  return {
    watch(kind, sessionId) {
      const key = `${kind}.${sessionId}`;
      let count = 0;
      let wake: (() => void) | undefined;
      const watcher = {
        bump() {
          count++;
          wake?.();
        },
      };
      const set = watchers.get(key) ?? new Set();
      set.add(watcher);
      watchers.set(key, set);
      return {
        get count() {
          return count;
        },
        changed(seen, timeoutMs, signal) {
          if (count > seen || signal.aborted) return Promise.resolve(count > seen);
          return new Promise<boolean>((resolve) => {
            const done = (changed: boolean) => {
              clearTimeout(timer);
              signal.removeEventListener("abort", aborted);
              wake = undefined;
              resolve(changed);
            };
            const aborted = () => done(false);
            const timer = setTimeout(() => done(false), timeoutMs);
            signal.addEventListener("abort", aborted);
            wake = () => done(true);
          });
        },
        stop() {
          wake?.();
          set.delete(watcher);
          if (set.size === 0) watchers.delete(key);
        },
      };
    },
    close() {
      for (const subscription of subscriptions) subscription.unsubscribe();
      bumpAll();
      void watching;
    },
  };
}
