import type { JetStreamClient } from "@nats-io/jetstream";
import type { StreamNames } from "@bas/event-store";
import { runner } from "@bas/proto";

/** Where dispatched tasks go: the runners' shared work queue. */
export interface WorkQueue {
  /** Publishes once per task id, also when called again for the same task (the message id dedupes it). */
  publish(assignment: runner.TaskAssignment): Promise<void>;
}

export function createWorkQueue(js: JetStreamClient, streams: StreamNames): WorkQueue {
  const subject = streams.work.subject("tasks");
  return {
    async publish(assignment) {
      await js.publish(subject, JSON.stringify(runner.TaskAssignment.toJSON(assignment)), {
        msgID: assignment.taskId,
      });
    },
  };
}
