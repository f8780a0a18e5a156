import { type Attempt, dispositionFor, LeaseLostError, type TaskDisposition } from "./attempt";
import { ignoreStale } from "./attempt-reports";
import { BrowserConnectError, BrowserGoneError } from "./browser-errors";
import { ModelError, StaleAttemptError, SupersededAttemptError } from "./ports";

/**
 * What becomes of the task when an attempt fails: another runner took it over (abandon), it is no longer current
 * (ack), it was interrupted (as the interruption says), or it failed: handed back for a fresh attempt while there
 * is one left, unless the model refused (already retried by the client), else reported failed.
 */
export async function dispositionOfFailure(t: Attempt, err: unknown): Promise<TaskDisposition> {
  const { assignment: a, deps } = t;
  if (err instanceof LeaseLostError || err instanceof SupersededAttemptError) {
    deps.log.warn(t.ids, "another runner took this task over; stopping this attempt");
    return { kind: "abandon" };
  }
  if (err instanceof StaleAttemptError) {
    deps.log.info({ ...t.ids, why: err.message }, "the task is no longer current; stopping");
    return { kind: "ack" };
  }
  const reason = t.interrupted();
  if (reason) return dispositionFor(reason);
  const error =
    err instanceof ModelError
      ? `The model call failed: ${err.message}`
      : err instanceof BrowserGoneError || err instanceof BrowserConnectError
        ? "The browser stopped unexpectedly"
        : "The runner hit an internal error";
  deps.log.error({ ...t.ids, err }, "task attempt failed");
  // The model's errors were already retried by the client; anything else (a dependency away for longer than the
  // outage grace, the browser gone) may go better in a fresh attempt, as long as there is one left. It continues
  // where this one stopped.
  if (!(err instanceof ModelError) && t.attempt < deps.maxAttempts) {
    return { kind: "nak", delayMs: 2_000 };
  }
  await ignoreStale(deps.reports.taskFailed({ sessionId: a.sessionId, taskId: a.taskId, error }));
  return { kind: "ack" };
}
