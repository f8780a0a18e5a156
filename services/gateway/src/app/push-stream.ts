import type { SessionWatch } from "./change-notices";

/** One read of what a stream pushes: its items in order, whether more are there now, whether more will ever come. */
export interface StreamPage<T> {
  items: T[];
  hasMore: boolean;
  complete: boolean;
}

export interface PushStreamOptions<T, C> {
  /** The first page, read before the stream was answered (so a missing resource is a plain 404). */
  first: StreamPage<T>;
  /** Where the first page was read after; the next read is after its last item. */
  cursor: C;
  cursorOf(item: T): C;
  read(after: C): Promise<StreamPage<T>>;
  /** Started before the first page was read: no change notice falls between that read and the first wait. */
  watch: SessionWatch;
  seen: number;
  signal: AbortSignal;
  /** How long to wait for news before saying "still here" (and reading again, should a notice have been lost). */
  heartbeatMs: number;
}

export type PushItem<T> = { item: T } | { heartbeat: true };

/**
 * What a session's read model holds, as it happens: each page read, then a wait for the sessions service's next
 * change notice of the session, until the read says nothing more will come.
 */
export async function* pushStream<T, C>(options: PushStreamOptions<T, C>): AsyncGenerator<PushItem<T>> {
  const { watch, signal } = options;
  let page = options.first;
  let cursor = options.cursor;
  let seen = options.seen;
  try {
    for (;;) {
      for (const item of page.items) {
        yield { item };
        cursor = options.cursorOf(item);
      }
      if (page.complete) return;
      if (!page.hasMore) {
        const changed = await watch.changed(seen, options.heartbeatMs, signal);
        if (signal.aborted) return;
        if (!changed) yield { heartbeat: true };
      }
      seen = watch.count;
      page = await options.read(cursor);
    }
  } finally {
    watch.stop();
  }
}

/**
 * Starts a push stream: the first page is read before anything is answered, so a missing resource is the caller's
 * plain error (and the watch is let go of); the watch begins before that read.
 */
export async function openPushStream<T, C>(
  options: Omit<PushStreamOptions<T, C>, "first" | "seen">,
): Promise<AsyncGenerator<PushItem<T>>> {
  const seen = options.watch.count;
  try {
    const first = await options.read(options.cursor);
    return pushStream({ ...options, first, seen });
  } catch (err) {
    options.watch.stop();
    throw err;
  }
}
