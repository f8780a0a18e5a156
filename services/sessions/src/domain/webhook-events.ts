import { createHmac } from "node:crypto";
import type { JsonValue } from "./events";
import type { RunStatus } from "./run-view";
import type { Session, SessionState } from "./state";

/**
 * What a project's webhook endpoints are told. The body is `{id, payload, timestamp, type}` as canonical JSON (keys
 * sorted, no whitespace), so a receiver can verify the signature over the raw body or over its own re-serialisation.
 */
export type WebhookEventType = "agent.task.status_update" | "run.status_update" | "test";

/** The types an endpoint may choose to get (the test ping comes once, whatever it chose). */
export const CHOOSABLE_WEBHOOK_EVENTS = ["agent.task.status_update", "run.status_update"] as const;

export interface WebhookEvent {
  /** Unique per change (the session event it came from and what it is about): one delivery per endpoint. */
  key: string;
  projectId: string;
  type: WebhookEventType;
  payload: { [key: string]: JsonValue };
  occurredAt: string;
}

/** A v3 session whose status changed: its task's status update, as the hosted service sends it. */
export function sessionStatusWebhook(
  before: SessionState,
  after: Session,
  event: { id: string; occurredAt: string },
): WebhookEvent | null {
  if (after.api !== "v3" || (before.status !== "none" && before.status === after.status)) return null;
  const taskId = after.task?.id ?? after.finishedTask?.id ?? after.taskIds.at(-1) ?? null;
  return {
    key: `${event.id}/session`,
    projectId: after.settings.projectId,
    type: "agent.task.status_update",
    payload: { session_id: after.id, task_id: taskId, status: after.status, metadata: {} },
    occurredAt: event.occurredAt,
  };
}

/** A v4 run whose status changed. */
export function runStatusWebhook(
  run: { id: string; sessionId: string; projectId: string },
  status: RunStatus,
  event: { id: string; occurredAt: string },
): WebhookEvent {
  return {
    key: `${event.id}/run/${run.id}`,
    projectId: run.projectId,
    type: "run.status_update",
    payload: { run_id: run.id, session_id: run.sessionId, status },
    occurredAt: event.occurredAt,
  };
}

/** JSON with every object's keys sorted and no whitespace. */
export function canonicalJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

export const webhookBody = (e: WebhookEvent) =>
  canonicalJson({ id: e.key, type: e.type, timestamp: e.occurredAt, payload: e.payload });

/** Hex HMAC-SHA256 of `<timestamp>.<body>` under the endpoint's secret (the X-Browser-Use-Signature header). */
export const webhookSignature = (secret: string, timestamp: number, body: string) =>
  createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
