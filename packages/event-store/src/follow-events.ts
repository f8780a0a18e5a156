import { setTimeout as sleep } from "node:timers/promises";
import {
  type Consumer,
  type ConsumerMessages,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
} from "@nats-io/jetstream";
import type { StoredEvent } from "./envelope";

export interface FollowedEvents {
  close(): Promise<void>;
}

export interface FollowEventsDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  log: { warn(o: object, msg: string): void };
}

/** Pause before a follow that broke off begins again. */
const RETRY_MS = 1_000;

/** The sequence of the stream's last stored event: where a follow that must not miss what comes next begins. */
export async function lastSequence(jsm: JetStreamManager, stream: string): Promise<number> {
  return (await jsm.streams.info(stream)).state.last_seq;
}

/**
 * Calls `onEvent` with every event stored on `subject` (wildcards allowed) after sequence `after` (by default: from
 * this call on), in stream order, none missed while this process runs. A plain subscription loses what is published while the connection is down; this
 * is a JetStream ordered consumer (nothing on the server outlives it), which the library moves past a dropped
 * connection. Should it give up (NATS gone for long), the follow begins again after the last event passed on.
 */
export async function followEvents(
  deps: FollowEventsDeps,
  stream: string,
  subject: string,
  onEvent: (event: StoredEvent) => void,
  after?: number,
): Promise<FollowedEvents> {
  const { js, jsm, log } = deps;
  // A position, not DeliverPolicy.New: an ordered consumer that resets before its first event would start over from
  // the stream's beginning.
  let next = (after ?? (await lastSequence(jsm, stream))) + 1;
  let consumer: Consumer | undefined;
  let messages: ConsumerMessages | undefined;
  const closing = new AbortController();

  async function followOnce(): Promise<void> {
    consumer = await js.consumers.get(stream, {
      filter_subjects: subject,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: next,
    });
    messages = await consumer.consume();
    if (closing.signal.aborted) messages.stop();
    for await (const msg of messages) {
      next = msg.seq + 1;
      let event: StoredEvent;
      try {
        event = { ...msg.json<Omit<StoredEvent, "sequence">>(), sequence: msg.seq } as StoredEvent;
      } catch {
        continue; // Not an event envelope: nothing to follow.
      }
      onEvent(event);
    }
  }

  const following = (async () => {
    while (!closing.signal.aborted) {
      try {
        await followOnce();
      } catch (err) {
        if (!closing.signal.aborted) log.warn({ err, subject }, "following events broke off; beginning again");
      }
      await sleep(RETRY_MS, undefined, { signal: closing.signal }).catch(() => undefined);
    }
  })();

  return {
    async close() {
      closing.abort();
      messages?.stop();
      await following;
      // Not waited for: the server drops an idle ordered consumer by itself after a few minutes.
      void consumer?.delete().catch(() => undefined);
    },
  };
}
