import type { runner } from "@bas/proto";
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
