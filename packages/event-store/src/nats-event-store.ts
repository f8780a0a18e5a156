import { randomUUID } from "node:crypto";
import { headers as natsHeaders } from "@nats-io/transport-node";
import { JetStreamApiError, type JetStreamClient, type JetStreamManager, type MsgRequest } from "@nats-io/jetstream";
import { activeTraceparent } from "@bas/service-kit/tracing";
import type { AggregateRef, DomainEvent, EventEnvelope, StoredEvent } from "./envelope";
import type { AppendOptions, AppendResult, EventStore, LoadedAggregate } from "./event-store";
import { ConcurrencyError, EventStoreUnavailableError } from "./errors";
import type { StreamNames } from "./streams";

/** JetStream's error code for "wrong last sequence" on an expected-last-subject-sequence publish. */
const WRONG_LAST_SEQUENCE = 10071;
const CACHE_LIMIT = 10_000;

export interface NatsEventStoreDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  streams: StreamNames;
  now?: () => Date;
}

/**
 * Event store on one JetStream stream with a subject per aggregate instance. Optimistic concurrency is the
 * server's expected-last-subject-sequence check; loaded aggregates are cached and topped up with only the events
 * appended since, so a command usually costs one lookup of the subject's last sequence.
 */
export function createNatsEventStore(deps: NatsEventStoreDeps): EventStore {
  const { js, jsm, streams } = deps;
  const now = deps.now ?? (() => new Date());
  const stream = streams.events.stream;
  const cache = new Map<string, LoadedAggregate<DomainEvent>>();
  const subjectOf = (a: AggregateRef) => streams.events.subject(a.type, a.id);

  function remember(subject: string, loaded: LoadedAggregate<DomainEvent>) {
    cache.delete(subject);
    cache.set(subject, loaded);
    if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  }

  async function version(aggregate: AggregateRef): Promise<number> {
    try {
      const last = await jsm.streams.getMessage(stream, { last_by_subj: subjectOf(aggregate) });
      return last?.seq ?? 0;
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === 404) return 0;
      throw new EventStoreUnavailableError("could not read the aggregate's version", { cause: err });
    }
  }

  // Reads the subject's events in order with direct gets (NATS 2.9 has no single-subject ordered consumer in nats.js v3).
  // The cache means a command usually reads none or one of them.
  async function readAfter(subject: string, after: number, upTo: number): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    for (let seq = after + 1; seq <= upTo; ) {
      const m = await jsm.streams.getMessage(stream, { seq, next_by_subj: subject } as MsgRequest);
      if (!m) break;
      events.push({ ...(m.json() as EventEnvelope), sequence: m.seq } as StoredEvent);
      seq = m.seq + 1;
    }
    return events;
  }

  async function load<E extends DomainEvent>(aggregate: AggregateRef): Promise<LoadedAggregate<E>> {
    const subject = subjectOf(aggregate);
    const latest = await version(aggregate);
    const cached = cache.get(subject) ?? { events: [], version: 0 };
    if (latest === cached.version) return cached as LoadedAggregate<E>;
    const newer = latest > cached.version ? await readAfter(subject, cached.version, latest) : [];
    const loaded = {
      events: latest > cached.version ? [...cached.events, ...newer] : await readAfter(subject, 0, latest),
      version: latest,
    };
    remember(subject, loaded);
    return loaded as LoadedAggregate<E>;
  }

  async function append<E extends DomainEvent>(
    aggregate: AggregateRef,
    events: readonly E[],
    expectedVersion: number,
    options: AppendOptions = {},
  ): Promise<AppendResult> {
    const subject = subjectOf(aggregate);
    const occurredAt = (options.occurredAt ?? now()).toISOString();
    // The command's trace goes with its events, so whatever they set off elsewhere joins that trace.
    const traceparent = options.traceparent ?? activeTraceparent();
    const stored: StoredEvent[] = [];
    let last = expectedVersion;
    // Each event expects the sequence of the one before it, so an interleaved writer is caught between any two.
    for (const [i, event] of events.entries()) {
      const envelope = {
        id: options.ids?.[i] ?? randomUUID(),
        type: event.type,
        data: event.data,
        aggregateType: aggregate.type,
        aggregateId: aggregate.id,
        occurredAt,
        ...(traceparent ? { traceparent } : {}),
        ...(events.length > 1 ? { commit: { index: i, size: events.length } } : {}),
      } as EventEnvelope;
      const h = natsHeaders();
      if (traceparent) h.set("traceparent", traceparent);
      try {
        const ack = await js.publish(subject, JSON.stringify(envelope), {
          msgID: envelope.id,
          expect: { lastSubjectSequence: last },
          headers: h,
        });
        last = ack.seq;
        stored.push({ ...envelope, sequence: ack.seq } as StoredEvent);
      } catch (err) {
        cache.delete(subject);
        if (err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE) {
          throw new ConcurrencyError(subject, last, { cause: err });
        }
        throw new EventStoreUnavailableError(`append to ${subject} failed`, { cause: err });
      }
    }
    // The aggregate as it is now, when this process knew all of it before (an append to a new one included).
    const known = cache.get(subject) ?? (expectedVersion === 0 ? { events: [], version: 0 } : undefined);
    if (known && known.version === expectedVersion) {
      remember(subject, { events: [...known.events, ...stored], version: last });
    }
    return { version: last, events: stored };
  }

  async function checkWritable(): Promise<void> {
    try {
      await js.publish(streams.health.subject, JSON.stringify({ at: now().toISOString() }), { timeout: 2_000 });
    } catch (err) {
      throw new EventStoreUnavailableError("event store does not accept writes", { cause: err });
    }
  }

  return { append, load, version, checkWritable };
}
