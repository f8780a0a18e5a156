import type { ServerUnaryCall } from "@grpc/grpc-js";
import { type CallDeadline, callDeadline } from "../../app/call-deadline";

/** The most kept back from a caller's deadline for answering after a commit. */
const MAX_COMMIT_MARGIN_MS = 1_500;
/** Without a deadline from the caller, a call still ends within this. */
const MAX_CALL_MS = 30_000;

/**
 * The caller's gRPC deadline (and cancellation) as the app layer sees it. The time kept for answering after a
 * commit is a quarter of what the caller allowed, at most 1.5 s: the gateway's 10 s deadline leaves 8.5 s for
 * waiting on the lock, and a short deadline still leaves most of itself for the work.
 */
export function deadlineOfCall(call: ServerUnaryCall<unknown, unknown>): CallDeadline {
  const raw = call.getDeadline();
  const at = raw instanceof Date ? raw.getTime() : Number(raw);
  const allowed = Number.isFinite(at) ? Math.max(0, at - Date.now()) : MAX_CALL_MS;
  return callDeadline({
    at: Number.isFinite(at) ? at : Number.POSITIVE_INFINITY,
    commitMarginMs: Math.min(MAX_COMMIT_MARGIN_MS, allowed / 4),
    maxMs: MAX_CALL_MS,
    cancelled: () => call.cancelled,
  });
}
