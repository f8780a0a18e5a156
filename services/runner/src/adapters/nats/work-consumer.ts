import {
  AckPolicy,
  type ConsumerMessages,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import type { StreamNames } from "@bas/event-store";
import { runner } from "@bas/proto";
import { inSpan } from "@bas/service-kit/tracing";

/** What happens to a delivery once its handler is done. */
export type Disposition =
  | { kind: "ack" }
  /** Hand it back: another runner (or this one, later) takes it as a new attempt. */
  | { kind: "nak"; delayMs?: number }
  /** Leave it alone: the attempt lost the task to another runner, whose delivery it now is. */
  | { kind: "abandon" };

export interface WorkItem {
  assignment: runner.TaskAssignment;
  /** 1 for the first delivery; JetStream's delivery count. */
  attempt: number;
}

export interface WorkConsumerOptions {
  js: JetStreamClient;
  jsm: JetStreamManager;
  streams: StreamNames;
  /** All runners share this durable consumer (competing consumers). */
  durable?: string;
  concurrency: number;
  ackWaitMs: number;
  /** JetStream's max_deliver: attempts + 1 (the extra delivery only reports the failure). */
  maxDeliver: number;
  log: { warn(o: object, msg: string): void; error(o: object, msg: string): void };
}

export interface WorkConsumer {
  /** The durable consumer shared by all runners (its lag is a metric). */
  readonly consumer: { stream: string; name: string };
  /** Stops taking new work; deliveries that arrive meanwhile are handed back at once. */
  stop(): Promise<void>;
}

const PULL_EXPIRES_MS = 5_000;

/** Creates or updates the shared durable consumer: explicit acks, redelivery after `ackWaitMs` of silence. */
export async function ensureWorkConsumer(
  options: Pick<WorkConsumerOptions, "jsm" | "streams" | "durable" | "ackWaitMs" | "maxDeliver">,
) {
  const durable = options.durable ?? "runners";
  const config = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: options.streams.work.subject("tasks"),
    ack_wait: nanos(options.ackWaitMs),
    max_deliver: options.maxDeliver,
    max_ack_pending: 10_000,
  };
  try {
    await options.jsm.consumers.info(options.streams.work.stream, durable);
    await options.jsm.consumers.update(options.streams.work.stream, durable, {
      ack_wait: config.ack_wait,
      max_deliver: config.max_deliver,
      max_ack_pending: config.max_ack_pending,
    });
  } catch {
    await options.jsm.consumers.add(options.streams.work.stream, config);
  }
  return durable;
}

/**
 * Pulls tasks from the work queue, `concurrency` at a time: each slot asks for one message only when it is free, so
 * no task waits in a local buffer while its ack timer runs. While a handler works, the delivery gets `working()`
 * heartbeats; its disposition decides ack, nak or nothing.
 */
export async function startWorkConsumer(
  options: WorkConsumerOptions,
  handle: (item: WorkItem) => Promise<Disposition>,
): Promise<WorkConsumer> {
  const durable = await ensureWorkConsumer(options);
  const consumer = await options.js.consumers.get(options.streams.work.stream, durable);
  let stopped = false;
  const pulls = new Set<ConsumerMessages>();
  const busy = new Set<Promise<void>>();

  async function work(msg: JsMsg) {
    let assignment: runner.TaskAssignment;
    try {
      assignment = runner.TaskAssignment.fromJSON(msg.json());
      if (!assignment.taskId || !assignment.sessionId) throw new Error("taskId and sessionId are required");
    } catch (err) {
      options.log.error({ err, seq: msg.seq }, "unreadable task assignment; dropping it");
      // An ack removes it from the work queue (term would leave it stored forever).
      await msg.ackAck().catch(() => msg.ack());
      return;
    }
    const heartbeat = setInterval(() => msg.working(), Math.max(250, Math.floor(options.ackWaitMs / 3)));
    try {
      const attempt = msg.info.deliveryCount;
      // The task joins the trace of the request that dispatched it.
      const disposition = await inSpan(
        "runner.task",
        {
          traceparent: msg.headers?.get("traceparent") || undefined,
          attributes: {
            "bas.session_id": assignment.sessionId,
            "bas.task_id": assignment.taskId,
            "bas.attempt": attempt,
          },
        },
        () => handle({ assignment, attempt }),
      );
      if (disposition.kind === "ack") await msg.ackAck().catch(() => msg.ack());
      else if (disposition.kind === "nak") msg.nak(disposition.delayMs);
    } catch (err) {
      options.log.error({ err, taskId: assignment.taskId }, "task handler failed; handing the task back");
      msg.nak(5_000);
    } finally {
      clearInterval(heartbeat);
    }
  }

  async function slot() {
    while (!stopped) {
      let batch: ConsumerMessages | undefined;
      try {
        batch = await consumer.fetch({ max_messages: 1, expires: PULL_EXPIRES_MS });
        pulls.add(batch);
        for await (const msg of batch) {
          // The fetch asked for this one message: ended now, or its idle-heartbeat check would fail it while the task
          // runs (no heartbeats come once the pull is served), and the slot would pause before its next pull.
          batch.stop();
          if (stopped) {
            msg.nak();
            continue;
          }
          await work(msg);
        }
      } catch (err) {
        if (stopped) return;
        options.log.warn({ err }, "pulling work failed; retrying");
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      } finally {
        if (batch) pulls.delete(batch);
      }
    }
  }

  for (let i = 0; i < options.concurrency; i++) {
    const running = slot().catch((err) => options.log.error({ err }, "work slot ended"));
    busy.add(running);
  }

  return {
    consumer: { stream: options.streams.work.stream, name: durable },
    async stop() {
      stopped = true;
      for (const pull of pulls) pull.stop();
      await Promise.all(busy);
    },
  };
}
