import type { JetStreamClient } from "@nats-io/jetstream";
import { headers } from "@nats-io/transport-node";
import type { StreamNames } from "@bas/event-store";
import { runner } from "@bas/proto";

/** Where dispatched tasks go: the runners' shared work queue. */
export interface WorkQueue {
  /**
   * Publishes once per task id, also when called again for the same task (the message id dedupes it). The
   * `traceparent` (the dispatching command's) lets the runner's work join the caller's trace.
   */
  publish(assignment: runner.TaskAssignment, traceparent?: string): Promise<void>;
}

export function createWorkQueue(js: JetStreamClient, streams: StreamNames): WorkQueue {
  const subject = streams.work.subject("tasks");
  return {
    async publish(assignment, traceparent) {
      const h = headers();
      if (traceparent) h.set("traceparent", traceparent);
      await js.publish(subject, JSON.stringify(runner.TaskAssignment.toJSON(assignment)), {
        msgID: assignment.taskId,
        headers: h,
      });
    },
  };
}
