import { setTimeout as sleep } from "node:timers/promises";
import {
  type Consumer,
  type ConsumerMessages,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { StoredEvent } from "./envelope";

export interface FollowedEvents {
  /** Settles once the follow knows where it starts: every event stored from then on is passed on. */
  ready: Promise<void>;
  close(): Promise<void>;
}

export interface FollowEventsDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  log: { warn(o: object, msg: string): void };
}

/** Pause before a follow that broke off (or could not find its start) tries again. */
const RETRY_MS = 1_000;

/** The sequence of the stream's last stored event: where a follow that must not miss what comes next begins. */
export async function lastSequence(jsm: JetStreamManager, stream: string): Promise<number> {
  return (await jsm.streams.info(stream)).state.last_seq;
}

/**
 * Calls `onEvent` with every event stored on `subject` (wildcards allowed) after sequence `after` (by default: the
 * stream's last when `ready` settles, which is at once unless NATS is away), in stream order, none missed while this
 * process runs. A plain subscription loses what is published while the connection is down; this is a JetStream
 * ordered consumer (nothing on the server outlives it) from the last event passed on, made anew after every reconnect
 * and whenever it gives up (NATS gone for long).
 */
export function followEvents(
  deps: FollowEventsDeps,
  stream: string,
  subject: string,
  onEvent: (event: StoredEvent) => void,
  after?: number,
): FollowedEvents {
  const { nc, js, jsm, log } = deps;
  const closing = new AbortController();
  const pause = () => sleep(RETRY_MS, undefined, { signal: closing.signal }).catch(() => undefined);
  let consumer: Consumer | undefined;
  let messages: ConsumerMessages | undefined;
  /** The sequence of the next event to pass on. */
  let next: number | undefined;
  let reconnected = false;

  // What the server sent just as the connection dropped is lost, and an ordered consumer notices only when a later
  // message shows the gap, which on a quiet subject may never come: after a reconnect the follow begins again.
  const status = nc.status();
  void (async () => {
    for await (const change of status) {
      if (change.type !== "reconnect") continue;
      reconnected = true;
      messages?.stop();
    }
  })();

  // A position, not DeliverPolicy.New: an ordered consumer that resets before its first event would start over from
  // the stream's beginning.
  async function start(): Promise<number | undefined> {
    if (after !== undefined) return after + 1;
    while (!closing.signal.aborted) {
      try {
        return (await lastSequence(jsm, stream)) + 1;
      } catch (err) {
        log.warn({ err, subject }, "cannot reach the event stream to start following it; trying again");
        await pause();
      }
    }
    return undefined;
  }

  async function followOnce(from: number): Promise<void> {
    consumer = await js.consumers.get(stream, {
      filter_subjects: subject,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: from,
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

  const starting = start();
  const following = (async () => {
    next = await starting;
    while (next !== undefined && !closing.signal.aborted) {
      try {
        await followOnce(next);
      } catch (err) {
        if (!closing.signal.aborted) log.warn({ err, subject }, "following events broke off; beginning again");
      }
      if (reconnected) reconnected = false;
      else await pause();
    }
  })();

  return {
    ready: starting.then(() => undefined),
    async close() {
      closing.abort();
      // The iterator nc.status() returns can be stopped (its type does not say so); left running it would be kept
      // by the connection for as long as it lives.
      (status as { stop?: () => void }).stop?.();
      messages?.stop();
      await following;
      // Not waited for: the server drops an idle ordered consumer by itself after a few minutes.
      void consumer?.delete().catch(() => undefined);
    },
  };
}
