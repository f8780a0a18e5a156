import { UnavailableError } from "@bas/errors";

/**
 * How long a call may still take, against its caller's gRPC deadline. Deadlines are wall-clock agreements between
 * two processes, so this reads the real clock, never the injected domain clock (tests move that one at will).
 *
 * A commit is allowed only while `commitMarginMs` is left: what the service commits it must still be able to answer
 * before the caller gives up, or the caller would report a failure for something that exists. Before the commit
 * point every wait is bounded by what is left, and running out is an `UnavailableError` with nothing done.
 */
export interface CallDeadline {
  /** Milliseconds left until the caller gives up. */
  remainingMs(): number;
  /** Milliseconds left for waiting before the commit point; never negative. */
  waitBudgetMs(): number;
  /** Throws UnavailableError unless a commit now can still be answered in time and the caller is still there. */
  checkBeforeCommit(what: string): void;
}

export interface CallDeadlineOptions {
  /** Absolute deadline in epoch milliseconds; Infinity = the caller set none. */
  at: number;
  /** Time kept for answering after a commit (the commit's own round trip and the reply). */
  commitMarginMs: number;
  /** The most a call may take when its caller set no deadline, so that nothing waits forever. */
  maxMs: number;
  /** True once the caller cancelled the call (its client gave up or went away). */
  cancelled?: () => boolean;
}

export function callDeadline(options: CallDeadlineOptions): CallDeadline {
  const at = Math.min(options.at, Date.now() + options.maxMs);
  const remainingMs = () => at - Date.now();
  return {
    remainingMs,
    waitBudgetMs: () => Math.max(0, remainingMs() - options.commitMarginMs),
    checkBeforeCommit(what) {
      if (options.cancelled?.()) throw new UnavailableError(`${what}: the caller went away; nothing was done`);
      if (remainingMs() < options.commitMarginMs) {
        throw new UnavailableError(`${what} could not be done in time; nothing was done, retry shortly`);
      }
    },
  };
}

/** A deadline for callers that set none (internal use, handler tests): generous, but still a bound. */
export const defaultDeadline = (): CallDeadline => callDeadline({ at: Infinity, commitMarginMs: 0, maxMs: 30_000 });
