/** Node socket errors of a peer that is down, restarting or unreachable. */
const NODE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);
/** Postgres: shutting down, restarting, not accepting connections yet, too many connections (class 08: lost). */
const PG_CODES = new Set(["57P01", "57P02", "57P03", "53300"]);
/** nats.js: the server did not answer (restarting, reconnecting, JetStream not ready yet). */
const NATS_NAMES = new Set([
  "TimeoutError",
  "RequestError",
  "NoRespondersError",
  "ConnectionError",
  "JetStreamNotEnabled",
]);
/** pg and pg-pool say a lost connection in words only. */
const LOST_CONNECTION =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed/i;

/**
 * True for an error that says a dependency is unavailable right now (down, restarting, unreachable) rather than that
 * the request is wrong: a retry later may succeed. Recognises errors that declare `retryable` (`ClientError` for
 * UNAVAILABLE/DEADLINE_EXCEEDED, `EventStoreUnavailableError`), socket errors, Postgres connection and shutdown
 * errors, and nats.js timeouts; looks through `cause`.
 */
export function isUnavailable(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 5) return false;
  if ((err as { retryable?: unknown }).retryable === true) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && (NODE_CODES.has(code) || PG_CODES.has(code) || code.startsWith("08"))) return true;
  if (NATS_NAMES.has(err.name)) return true;
  if (err.name === "JetStreamApiError" && Number((err as { status?: unknown }).status) >= 500) return true;
  if (LOST_CONNECTION.test(err.message)) return true;
  return isUnavailable(err.cause, depth + 1);
}

export interface RetryOptions {
  /**
   * How long an outage may last, from the first failure, before its error is passed on. The last try is made at
   * the end of the grace. Default {@link DEFAULT_GRACE_MS}; `Infinity` retries until success or `signal`.
   */
  graceMs?: number;
  /** Which errors are worth waiting out (default {@link isUnavailable}); any other is thrown at once. */
  retryable?: (err: unknown) => boolean;
  /** Aborting stops the waiting: the last error is thrown at once. */
  signal?: AbortSignal;
  /** Called before each wait, e.g. to log what is being waited for. */
  onRetry?: (err: unknown, info: { attempt: number; delayMs: number; waitedMs: number }) => void;
  /** First wait; each further one doubles, up to `maxDelayMs`. */
  initialDelayMs?: number;
  maxDelayMs?: number;
}

/** A blip: what a call waits for when its caller did not say how long an outage may last. */
export const DEFAULT_GRACE_MS = 5_000;

/**
 * The wait before try number `attempt + 1`: doubling from `initialMs` up to `maxMs`, with ±20% jitter so that many
 * waiting callers do not come back in lockstep. The one backoff of the project.
 */
export function backoffDelay(attempt: number, { initialMs = 250, maxMs = 5_000 } = {}): number {
  const delay = Math.min(maxMs, initialMs * 2 ** (attempt - 1)) * (0.8 + Math.random() * 0.4);
  return Math.max(1, Math.round(delay));
}

/**
 * Calls `fn` again while it fails with an error worth waiting out (by default one that says a dependency is
 * unavailable), with {@link backoffDelay} (0.25 s, 0.5 s, 1 s, ... up to 5 s), until the grace is spent: a service
 * restarting costs its callers a wait, not their work. Any other error is thrown at once, and so is the last one once
 * the grace is over or the signal aborted.
 */
export async function retry<T>(fn: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const retryable = options.retryable ?? isUnavailable;
  const delays = { initialMs: options.initialDelayMs, maxMs: options.maxDelayMs };
  let firstFailure: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      firstFailure ??= Date.now();
      const waitedMs = Date.now() - firstFailure;
      const left = graceMs - waitedMs;
      if (!retryable(err) || left <= 0 || options.signal?.aborted) throw err;
      const delayMs = Math.min(backoffDelay(attempt, delays), left);
      options.onRetry?.(err, { attempt, delayMs, waitedMs });
      if (!(await pause(delayMs, options.signal))) throw err;
    }
  }
}

/** Waits `ms`; false when the signal aborted the wait. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (completed: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(completed);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
