import type { runs } from "@bas/proto";
import type { SessionWatch } from "./change-notices";

export interface RunEventStreamOptions {
  /** The first page, read before the stream was answered (so a missing run is a plain 404). */
  first: runs.ListRunEventsResponse;
  page(after: number): Promise<runs.ListRunEventsResponse>;
  /** Started before the first page was read: no change notice falls between that read and the first wait. */
  watch: SessionWatch;
  seen: number;
  signal: AbortSignal;
  /** How long to wait for news before saying "still here" (and reading again, should a notice have been lost). */
  heartbeatMs: number;
}

export type RunStreamItem = { event: runs.RunEvent } | { heartbeat: true };

/**
 * A run's events as they happen: each page read from the run's read model, then a wait for the sessions service's
 * next change notice, until the run has ended and its last event went out.
 */
export async function* runEventStream(options: RunEventStreamOptions): AsyncGenerator<RunStreamItem> {
  const { watch, signal } = options;
  let page = options.first;
  let seen = options.seen;
  try {
    for (;;) {
      for (const event of page.events) yield { event };
      if (page.complete) return;
      if (!page.hasMore) {
        const changed = await watch.changed(seen, options.heartbeatMs, signal);
        if (signal.aborted) return;
        if (!changed) yield { heartbeat: true };
      }
      seen = watch.count;
      page = await options.page(page.nextAfter);
    }
  } finally {
    watch.stop();
  }
}
