import type { JetStreamClient } from "@nats-io/jetstream";
import { headers } from "@nats-io/transport-node";
import type { StreamNames } from "@bas/event-store";
import { billing } from "@bas/proto";
import { retry } from "@bas/service-kit";
import { activeTraceparent } from "@bas/service-kit/tracing";
import type { OutagePolicy } from "../../app/ports";

export interface LlmUsageFact {
  /** Billing counts a usage id once: a retry, or a new attempt making sure billing has the call, reuses it. */
  id: string;
  /** When the call was made (default: now). */
  occurredAt?: Date;
  projectId: string;
  sessionId: string;
  /** A v4 run's usage is also charged to the run's ledger, and its cap is the run's. */
  runId?: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  ownKey: boolean;
}

export interface UsagePublisher {
  /** Publishes one model call's usage for billing, waiting out a NATS outage up to the grace; counted once per id. */
  publishLlm(usage: LlmUsageFact): Promise<void>;
}

export function createUsagePublisher(
  js: JetStreamClient,
  streams: StreamNames,
  outage: OutagePolicy,
  now: () => Date = () => new Date(),
): UsagePublisher {
  const subject = streams.usage.subject("llm");
  return {
    async publishLlm(usage) {
      const message: billing.UsageRecorded = {
        id: usage.id,
        projectId: usage.projectId,
        sessionId: usage.sessionId,
        runId: usage.runId,
        occurredAt: usage.occurredAt ?? now(),
        llm: {
          model: usage.model,
          inputTokens: usage.inputTokens,
          outputTokens: usage.outputTokens,
          ownKey: usage.ownKey,
        },
      };
      const data = JSON.stringify(billing.UsageRecorded.toJSON(message));
      // The model call's trace goes with its usage: billing's charge of it joins the task's trace.
      const h = headers();
      const traceparent = activeTraceparent();
      if (traceparent) h.set("traceparent", traceparent);
      // Any failure to publish is NATS not answering: the same id makes a retry harmless.
      await retry(() => js.publish(subject, data, { msgID: usage.id, headers: h }), {
        graceMs: outage.graceMs,
        retryable: () => true,
        onRetry: (err, { waitedMs }) => outage.onWait?.("NATS", err, waitedMs),
      });
    },
  };
}
