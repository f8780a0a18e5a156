import type { runner } from "@bas/proto";
import { retry } from "@bas/service-kit";
import type { TaskWorkerDeps } from "./task-worker";

/** Why a running task is interrupted from outside. */
export type InterruptReason = "task_stopped" | "session_ended" | "task_ended" | "handback";

/** What the handler tells the work queue to do with the delivery. */
export type TaskDisposition = { kind: "ack" } | { kind: "nak"; delayMs?: number } | { kind: "abandon" };

/** One attempt at a task, as every step of it sees it. */
export interface Attempt {
  assignment: runner.TaskAssignment;
  attempt: number;
  /** What every log line of the attempt carries. */
  ids: { sessionId: string; taskId: string; attempt: number };
  deps: TaskWorkerDeps;
  signal: AbortSignal;
  /** Why the attempt was interrupted from outside, once it was. */
  interrupted(): InterruptReason | undefined;
  /** Runs `fn` again while `dependency` is away, up to the outage grace (or until the attempt is interrupted). */
  waitOut<T>(dependency: string, fn: () => Promise<T>, retryable?: (err: unknown) => boolean): Promise<T>;
}

/** A fresh attempt, and the way to interrupt it from outside: the first reason given is the one it keeps. */
export function newAttempt(
  assignment: runner.TaskAssignment,
  attempt: number,
  deps: TaskWorkerDeps,
): { attempt: Attempt; interrupt(reason: InterruptReason): void } {
  const controller = new AbortController();
  let reason: InterruptReason | undefined;
  const interrupt = (why: InterruptReason) => {
    reason ??= why;
    controller.abort(why);
  };
  return {
    interrupt,
    attempt: {
      assignment,
      attempt,
      ids: { sessionId: assignment.sessionId, taskId: assignment.taskId, attempt },
      deps,
      signal: controller.signal,
      interrupted: () => reason,
      waitOut: (dependency, fn, retryable) =>
        retry(fn, {
          graceMs: deps.outage.graceMs,
          signal: controller.signal,
          ...(retryable ? { retryable } : {}),
          onRetry: (err, { waitedMs }) => deps.outage.onWait?.(dependency, err, waitedMs),
        }),
    },
  };
}

export function dispositionFor(reason: InterruptReason): TaskDisposition {
  // Handed back on shutdown: another runner continues. Stopped or ended: nothing more to do.
  return reason === "handback" ? { kind: "nak" } : { kind: "ack" };
}

/** The lease was taken over by another runner. */
export class LeaseLostError extends Error {
  override name = "LeaseLostError";
}

/** A disposition, for the step that decided the attempt is over. */
export const isDisposition = (value: object): value is TaskDisposition => "kind" in value;
