import { randomUUID } from "node:crypto";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { StreamNames } from "@bas/event-store";
import { billing } from "@bas/proto";

export interface LlmUsageFact {
  projectId: string;
  sessionId: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  ownKey: boolean;
}

export interface UsagePublisher {
  /** Publishes one model call's usage for billing; a retry reuses the usage id, so it is counted once. */
  publishLlm(usage: LlmUsageFact): Promise<void>;
}

export function createUsagePublisher(
  js: JetStreamClient,
  streams: StreamNames,
  now: () => Date = () => new Date(),
): UsagePublisher {
  const subject = streams.usage.subject("llm");
  return {
    async publishLlm(usage) {
      const id = randomUUID();
      const message: billing.UsageRecorded = {
        id,
        projectId: usage.projectId,
        sessionId: usage.sessionId,
        occurredAt: now(),
        llm: {
          model: usage.model,
          inputTokens: usage.inputTokens,
          outputTokens: usage.outputTokens,
          ownKey: usage.ownKey,
        },
      };
      const data = JSON.stringify(billing.UsageRecorded.toJSON(message));
      for (let attempt = 1; ; attempt++) {
        try {
          await js.publish(subject, data, { msgID: id });
          return;
        } catch (err) {
          if (attempt >= 5) throw err;
          await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
        }
      }
    },
  };
}
