import { type Leadership, runAsLeader, type StreamNames } from "@bas/event-store";
import { type Logger, retry } from "@bas/service-kit";
import {
  AckPolicy,
  type ConsumerConfig,
  type ConsumerMessages,
  DeliverPolicy,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import { nanos, type NatsConnection } from "@nats-io/transport-node";
import type { Kysely } from "kysely";
import type { Usage } from "../../domain/usage";
import { parseUsage } from "./parse-usage";

export interface UsageConsumer {
  /** The durable consumer it reads the USAGE stream with (its lag is a metric). */
  readonly consumer: { stream: string; name: string };
  start(): Promise<void>;
  /** Stops taking facts; the batch in flight finishes (or is left unacknowledged for redelivery) first. */
  stop(): Promise<void>;
}

export interface UsageConsumerDeps {
  /** The connection `js` and `jsm` use: a replica cut off from it gives up the lead. */
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  streams: StreamNames;
  /** For the leader lock: one replica consumes at a time. */
  db: Kysely<any>;
  /** Charges facts in stream order; throwing means "try again" (the batch is retried in place, never skipped). */
  handle(usages: Usage[]): Promise<void>;
  log: Pick<Logger, "info" | "warn" | "error">;
  durable?: string;
  ackWaitMs?: number;
  maxBatch?: number;
}

/**
 * Feeds billing from one durable consumer over the whole USAGE stream, strictly in stream order: that order is what
 * lets each ledger skip a redelivered fact by comparing sequences. JetStream redelivers an unacknowledged fact only
 * after `ack_wait`, behind newer ones, so whenever order could break (a new leader, a lost connection, a hole in
 * the sequence) the consumer is recreated at the first unprocessed sequence instead of waiting for redeliveries.
 * Facts are charged in batches of whatever has arrived, so the rate follows the load: one at a time when quiet,
 * hundreds per append under a backlog.
 */
export function createUsageConsumer(deps: UsageConsumerDeps): UsageConsumer {
  const { js, jsm, streams, log } = deps;
  const stream = streams.usage.stream;
  const durable = deps.durable ?? "billing_usage";
  const ackWaitMs = deps.ackWaitMs ?? 30_000;
  const maxBatch = deps.maxBatch ?? 256;
  let stopped = true;
  let messages: ConsumerMessages | undefined;
  let running: Promise<void> | undefined;

  /** Recreates the consumer so that its next delivery is `next` (or the stream's first fact). */
  async function resetConsumer(next: number | undefined): Promise<void> {
    await jsm.consumers.delete(stream, durable).catch((err: unknown) => {
      if (!(err instanceof JetStreamApiError && err.status === 404)) throw err;
    });
    const config: Partial<ConsumerConfig> = {
      durable_name: durable,
      filter_subject: streams.usage.subjects,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ackWaitMs),
      max_ack_pending: maxBatch * 4,
      ...(next === undefined
        ? { deliver_policy: DeliverPolicy.All }
        : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: next }),
    };
    await jsm.consumers.add(stream, config);
  }

  /** The first sequence not yet acknowledged, from the consumer left by the previous leader (if any). */
  async function resumePoint(): Promise<number | undefined> {
    try {
      const info = await jsm.consumers.info(stream, durable);
      return Math.max(info.ack_floor.stream_seq + 1, info.config.opt_start_seq ?? 1);
    } catch (err) {
      if (err instanceof JetStreamApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** Charges a batch, retrying in place until it succeeds or billing stops. */
  async function charge(batch: JsMsg[], usages: Usage[]): Promise<boolean> {
    if (stopped) return false;
    if (usages.length === 0) return true;
    try {
      await retry(() => deps.handle(usages), {
        graceMs: Number.POSITIVE_INFINITY,
        retryable: () => !stopped,
        initialDelayMs: 100,
        onRetry(err, { attempt }) {
          log.error({ err, from: batch[0]?.seq, to: batch.at(-1)?.seq, attempt }, "charging usage failed; retrying");
          for (const m of batch) m.working();
        },
      });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Consumes until billing stops, the subscription ends or order would break; returns the sequence to resume at.
   * Runs on a consumer just (re)created at `expected`, so its first delivery is right whatever its sequence (facts
   * removed from the stream leave holes); after that, each delivery must follow the one before.
   * A reader moves deliveries into a buffer (bounded by the consumer's max_ack_pending); each turn charges all
   * that is buffered, up to `maxBatch`.
   */
  async function consume(expected: number | undefined, cutOff: AbortSignal): Promise<number | undefined> {
    const consumer = await js.consumers.get(stream, durable);
    const subscription = await consumer.consume({ max_messages: maxBatch * 2, expires: 5_000 });
    messages = subscription;
    if (cutOff.aborted) subscription.stop();
    const buffer: JsMsg[] = [];
    let first = true;
    let ended = false;
    let wake: (() => void) | undefined;
    const reader = (async () => {
      try {
        for await (const m of subscription) {
          buffer.push(m);
          wake?.();
        }
      } finally {
        ended = true;
        wake?.();
      }
    })();
    try {
      while (!stopped) {
        if (buffer.length === 0) {
          if (ended) break;
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
          continue;
        }
        const batch: JsMsg[] = [];
        const usages: Usage[] = [];
        let gap = false;
        for (const m of buffer.splice(0, maxBatch)) {
          if (gap) continue; // left unacknowledged: the restarted consumer delivers it again, in order
          if (expected !== undefined && m.seq < expected) {
            m.ack(); // a late redelivery of a fact already charged
          } else if (expected !== undefined && m.seq > expected && !first) {
            gap = true; // an earlier fact is pending redelivery: restart at the hole after this batch
          } else {
            first = false;
            expected = m.seq + 1;
            batch.push(m);
            const usage = parseUsage(m);
            if (usage) usages.push(usage);
            else log.warn({ sequence: m.seq, subject: m.subject }, "not a usage fact; skipped");
          }
        }
        if (!(await charge(batch, usages))) break;
        for (const m of batch) m.ack();
        if (gap) {
          log.warn({ expected }, "usage arrived out of order; restarting the consumer at the first uncharged fact");
          break;
        }
      }
    } finally {
      await subscription.close().catch(() => undefined);
      await reader.catch(() => undefined);
    }
    return expected;
  }

  async function lead({ stillLeader, cutOff }: Leadership): Promise<void> {
    // Cut off from NATS, it would charge nothing until it is back, and budgets would go unenforced as long.
    const giveUpLead = () => {
      log.info({ stream, durable }, "cut off from NATS: another replica takes the lead");
      messages?.stop();
    };
    cutOff.addEventListener("abort", giveUpLead);
    try {
      let next = await resumePoint();
      // Whatever the previous leader left in flight, delivery restarts at the first unacknowledged fact, in order.
      await resetConsumer(next);
      while (!stopped && !cutOff.aborted) {
        next = await consume(next, cutOff);
        // A replica that lost its lock (its Postgres connection died) must not reset the new leader's consumer.
        if (stopped || cutOff.aborted || !(await stillLeader())) return;
        await resetConsumer(next);
      }
    } finally {
      cutOff.removeEventListener("abort", giveUpLead);
    }
  }

  return {
    consumer: { stream, name: durable },
    async start() {
      if (!stopped) return;
      stopped = false;
      const onError = (err: unknown) => log.error({ err }, "usage consumer failed; restarting");
      running = runAsLeader({
        db: deps.db,
        nc: deps.nc,
        key: `billing-usage:${streams.namespace}`,
        isStopped: () => stopped,
        lead,
        onError,
      });
      log.info({ stream, durable }, "usage consumer started");
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await messages?.close().catch(() => undefined);
      await running;
    },
  };
}
