import type { runs } from "@bas/proto";
import { z } from "zod";
import { DateTime, queryInt, Uuid } from "../../../schemas/common";

export const QueueMessageRequest = z
  .strictObject({
    text: z.string().min(1).max(100_000).describe("What to tell the agent: it runs as the session's next turn."),
    interrupt: z
      .boolean()
      .default(false)
      .describe("Cancel the session's active run and run this straight after it (on an idle session: just run)."),
    attachedFileIds: z
      .array(Uuid)
      .max(20)
      .nullable()
      .optional()
      .describe("Files of the session's workspace to point its run to, as on POST /api/v4/runs."),
  })
  .meta({ id: "QueueMessageRequest" });

export const QUEUED_MESSAGE_STATUSES = [
  "pending",
  "dispatching",
  "consumed",
  "cancelled",
  "superseded",
  "failed",
] as const;

export const QueuedMessage = z
  .object({
    id: z.int().describe("1, 2, 3… within the session."),
    sessionId: Uuid,
    runId: Uuid.nullable().describe("The run the message became, once dispatched."),
    mode: z.enum(["queue", "interrupt"]),
    status: z
      .enum(QUEUED_MESSAGE_STATUSES)
      .describe(
        "pending: waits for the active run to end; dispatching: its run was created; consumed: its run started; " +
          "cancelled: taken back, or its run cancelled before it started; superseded: a later interrupt cancelled " +
          "its run before it started; failed: the session ended first, or its run failed before it started.",
      ),
    text: z.string(),
    attachedFileIds: z.array(Uuid).nullable(),
    createdAt: DateTime,
  })
  .meta({ id: "QueuedMessage" });

export const SteeringCutoff = z
  .object({
    sourceRunId: Uuid.describe("A run that a message sent with `interrupt` cut short."),
    createdAt: DateTime.describe("When that message was accepted: the run's transcript ends here."),
  })
  .meta({ id: "SteeringCutoff" });

export const QueueListResponse = z
  .object({
    queue: z.array(QueuedMessage),
    steeringCutoffs: z
      .array(SteeringCutoff)
      .describe("One per interrupted run of the session, oldest first, so a client can freeze each transcript."),
  })
  .meta({ id: "QueueListResponse" });

export const QueuedMessageParams = z.object({
  id: Uuid.describe("Session id (UUID)."),
  messageId: queryInt({ min: 0, default: 0, description: "The message's id within the session." }),
});

export function toQueuedMessage(m: runs.QueuedMessage): z.input<typeof QueuedMessage> {
  return {
    id: m.id,
    sessionId: m.sessionId,
    runId: m.runId ?? null,
    mode: m.mode as "queue" | "interrupt",
    status: m.status as (typeof QUEUED_MESSAGE_STATUSES)[number],
    text: m.text,
    attachedFileIds: m.attachedFileIds.length ? m.attachedFileIds : null,
    createdAt: (m.createdAt ?? new Date(0)).toISOString(),
  };
}
