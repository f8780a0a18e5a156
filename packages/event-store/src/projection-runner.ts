import {
  AckPolicy,
  type ConsumerMessages,
  DeliverPolicy,
  type JsMsg,
  type JetStreamClient,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { nanos, type NatsConnection } from "@nats-io/transport-node";
import { retry } from "@bas/service-kit/retry";
import { type Kysely, sql } from "kysely";
import { endsMidCommit, inOrder } from "./commit-boundary";
import type { StoredEvent } from "./envelope";
import { runAsLeader } from "./leader";
import { type EventConsumer, reactorAsProjection } from "./projection";
import type { StreamNames } from "./streams";

export interface ProjectionRunnerDeps {
  /** The connection `js` and `jsm` use: a replica cut off from it gives up the lead. */
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  db: Kysely<any>;
  streams: StreamNames;
  projection: EventConsumer;
  log?: { info(o: object, msg: string): void; error(o: object, msg: string): void };
  /** How long JetStream waits for an ack before redelivering; short in tests. */
  ackWaitMs?: number;
  /**
   * Runs after a batch's transaction committed and before it is acked, with the events it applied and the last one's
   * sequence: the moment the read model shows them (used to tell caches what changed, and as a crash seam in tests).
   * Each event comes once, also when its message is delivered again.
   */
  afterCommit?: (sequence: number, events: readonly StoredEvent[]) => Promise<void> | void;
}

export interface ProjectionRunner {
  /** The durable consumer it reads the stream with (its lag is a metric); its name changes with each rebuild. */
  readonly consumer: { readonly stream: string; readonly name: string };
  start(): Promise<void>;
  stop(): Promise<void>;
  /**
   * Drops the projection's tables and replays the whole stream into fresh ones, also while another replica leads: that
   * one's next batch finds the checkpoint of a newer generation, drops what it holds and starts over from it.
   */
  rebuild(): Promise<void>;
  /** Last stream sequence applied (from Postgres, whichever replica applied it). */
  position(): Promise<number>;
  /** Resolves once the projection has applied `sequence`; rejects after `timeoutMs`. */
  waitFor(sequence: number, timeoutMs?: number): Promise<void>;
  /** Resolves once the projection has applied every event of its aggregate type stored so far. */
  catchUp(timeoutMs?: number): Promise<void>;
}

const CHECKPOINTS = "projection_checkpoints";
const MAX_BATCH = 256;
/** Messages the consumer may hold unacknowledged: the server sends no more until some are acked. */
const MAX_ACK_PENDING = 1_000;
/** How often a leader with nothing to apply looks whether the projection was rebuilt meanwhile. */
const GENERATION_LOOK_MS = 5_000;
const PULL_EXPIRES_MS = 5_000;
/** How long a batch waits for the rest of an append whose first events arrived (they follow within milliseconds). */
const COMMIT_TAIL_WAIT_MS = 2_000;

/** The promise's value, or null if it takes longer than `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const toStoredEvent = (m: JsMsg) => ({ ...(m.json() as object), sequence: m.seq }) as StoredEvent;
/** A batch read for an older generation of the projection than the checkpoint's (a rebuild came in between). */
class Superseded extends Error {}

/**
 * Feeds one projection from a durable JetStream consumer. Only one replica applies events at a time (a Postgres
 * advisory lock per projection); others stand by and take over when its Postgres connection goes away, or when it is
 * cut off from NATS.
 */
export function createProjectionRunner(deps: ProjectionRunnerDeps): ProjectionRunner {
  const { js, jsm, db, streams } = deps;
  const projection = "react" in deps.projection ? reactorAsProjection(deps.projection) : deps.projection;
  const handles = new Set<string>(projection.canHandle);
  const stream = streams.events.stream;
  // Each rebuild starts a generation with a consumer of its own, reading from the stream's start; generation 0 keeps
  // the name consumers had before generations existed.
  const durableOf = (generation: number) =>
    `proj_${projection.name}${generation ? `_g${generation}` : ""}`.replace(/[^a-zA-Z0-9_-]/g, "_");
  let generation = 0;
  // Checkpoints of two namespaces sharing a database must not collide.
  const checkpointName = `${streams.namespace}/${projection.name}`;
  let running: Promise<void> | undefined;
  let stopped = true;
  let messages: ConsumerMessages | undefined;
  let applied = 0;
  /** Whether this replica holds the lead, and so applies events itself. */
  let leading = false;
  const waiters = new Set<() => void>();

  /** Creates the checkpoint table and the projection's tables; replicas starting together take turns. */
  async function setupTables(): Promise<void> {
    await db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext('projection-setup'))`.execute(trx);
      await sql`create table if not exists ${sql.table(CHECKPOINTS)} (
        name text primary key, sequence bigint not null, generation int not null default 0)`.execute(trx);
      // A table made before generations lacks the column. Looked up first: an alter takes the table's exclusive lock
      // even when it changes nothing, and every replica's reads of every checkpoint would queue behind it.
      const { rows } = await sql`select 1 from information_schema.columns
        where table_schema = current_schema() and table_name = ${CHECKPOINTS} and column_name = 'generation'`.execute(
        trx,
      );
      if (rows.length === 0) {
        await sql`alter table ${sql.table(CHECKPOINTS)} add column generation int not null default 0`.execute(trx);
      }
      await projection.setup(trx);
    });
  }

  /** The checkpoint row, locked until the transaction ends when `trx` is given. */
  async function checkpointRow(trx?: Kysely<any>) {
    const query = (trx ?? db)
      .selectFrom(CHECKPOINTS)
      .select(["sequence", "generation"])
      .where("name", "=", checkpointName);
    const row = await (trx ? query.forUpdate() : query).executeTakeFirst();
    return { sequence: Number(row?.sequence ?? 0), generation: Number(row?.generation ?? 0) };
  }

  /**
   * Takes up the checkpoint's generation. A rebuilt one (generation > 0) that has applied nothing yet gets fresh
   * tables first, under the checkpoint's lock, so a rebuild is one update of the checkpoint (`rebuild()`, or by hand:
   * docs/operate.md). Then its consumer is made sure of, and the one before it goes.
   */
  async function takeUpGeneration() {
    const checkpoint = await db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext('projection-setup'))`.execute(trx);
      const row = await checkpointRow(trx);
      if (row.generation > 0 && row.sequence === 0) {
        await projection.teardown(trx);
        await projection.setup(trx);
      }
      return row;
    });
    // What this replica saw applied belonged to the tables of before.
    if (checkpoint.generation !== generation) applied = checkpoint.sequence;
    generation = checkpoint.generation;
    if (generation > 0) await jsm.consumers.delete(stream, durableOf(generation - 1)).catch(() => undefined);
    const durable = durableOf(generation);
    const config = {
      durable_name: durable,
      filter_subject: streams.events.ofType(projection.aggregateType),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(deps.ackWaitMs ?? 30_000),
      max_ack_pending: MAX_ACK_PENDING,
    };
    try {
      await jsm.consumers.info(stream, durable);
      await jsm.consumers.update(stream, durable, config);
    } catch {
      await jsm.consumers.add(stream, config);
    }
  }

  async function position(): Promise<number> {
    return (await checkpointRow()).sequence;
  }

  /**
   * Applies a batch in one transaction and returns the events it applied: those at or below the checkpoint were applied
   * before (a crash, or an ack that came after the ack wait, redelivers them) and are skipped.
   */
  async function applyBatch(events: StoredEvent[]): Promise<StoredEvent[]> {
    return db.transaction().execute(async (trx) => {
      const checkpoint = await checkpointRow(trx);
      if (checkpoint.generation !== generation) throw new Superseded();
      const fresh = inOrder(events).filter((e) => e.sequence > checkpoint.sequence);
      if (fresh.length === 0) return fresh;
      for (const event of fresh) if (handles.has(event.type)) await projection.apply(trx, event);
      const sequence = fresh[fresh.length - 1].sequence;
      await trx
        .insertInto(CHECKPOINTS)
        .values({ name: checkpointName, sequence, generation })
        .onConflict((oc) => oc.column("name").doUpdateSet({ sequence }))
        .execute();
      return fresh;
    });
  }

  async function consume(cutOff: AbortSignal): Promise<void> {
    await takeUpGeneration();
    const consumer = await js.consumers.get(stream, durableOf(generation));
    // Short-lived pull requests: one left behind by a process that died is not waited on for long.
    const current = await consumer.consume({ max_messages: 512, expires: PULL_EXPIRES_MS });
    messages = current;
    // A rebuild shows as a newer generation: a batch notices it, and so does this look while no event comes.
    const watch = setInterval(() => {
      checkpointRow()
        .then((checkpoint) => checkpoint.generation !== generation && current.stop())
        .catch(() => undefined);
    }, GENERATION_LOOK_MS);
    // Cut off from NATS, it would apply nothing until it is back, and every read that waits for the read model would
    // wait as long.
    const giveUpLead = () => {
      deps.log?.info({ projection: projection.name }, "cut off from NATS: another replica takes the lead");
      current.stop();
    };
    cutOff.addEventListener("abort", giveUpLead);
    if (cutOff.aborted) giveUpLead();
    leading = true;
    try {
      await consumeFrom(current);
    } finally {
      clearInterval(watch);
      cutOff.removeEventListener("abort", giveUpLead);
      leading = false;
      // Also when stop() came while the subscription was being made: a subscription left open keeps its
      // heartbeat timer running after the connection is gone, and with it the process.
      current.stop();
    }
  }

  async function consumeFrom(current: ConsumerMessages): Promise<void> {
    const iterator = current[Symbol.asyncIterator]();
    // A next() that outlived a wait below; the loop takes it up first.
    let carried: Promise<IteratorResult<JsMsg>> | undefined;
    const next = () => {
      const pending = carried ?? iterator.next();
      carried = undefined;
      return pending;
    };
    while (!stopped) {
      const first = await next();
      if (first.done) return;
      // Whatever has already arrived goes into the same transaction: one commit per batch, not per event. Never
      // wait for more here: getPending() also counts the consumer's own pull requests while they are queued, so it
      // can say 1 with no message there, and a batch that waited would sit until a redelivery (ack wait).
      const batch: JsMsg[] = [first.value];
      while (current.getPending() > 0 && batch.length < MAX_BATCH) {
        const pending = next();
        const more = await within(pending, 0);
        if (more === null) {
          carried = pending;
          break;
        }
        if (more.done) break;
        batch.push(more.value);
      }
      const events = batch.map(toStoredEvent);
      // The events of one append become visible together: a batch never ends in the middle of one (a reader would
      // see a state that never was). A writer that died mid-append leaves a tail that never comes: apply without it.
      // So does a batch holding MAX_ACK_PENDING messages (appends that overlap without a break, under heavy load): the
      // server sends nothing more until it is acked, and waiting for a tail only cost COMMIT_TAIL_WAIT_MS a batch.
      while (endsMidCommit(events, applied) && !stopped && batch.length < MAX_ACK_PENDING) {
        const pending = next();
        const more = await within(pending, COMMIT_TAIL_WAIT_MS);
        if (more === null) {
          carried = pending;
          break;
        }
        if (more.done) break;
        batch.push(more.value);
        events.push(toStoredEvent(more.value));
      }
      // A failing batch is retried in place: skipping it would let later events overtake it.
      if (stopped) return;
      let applies: StoredEvent[];
      try {
        applies = await retry(() => applyBatch(events), {
          graceMs: Number.POSITIVE_INFINITY,
          retryable: (err) => !stopped && !(err instanceof Superseded),
          initialDelayMs: 200,
          onRetry(err, { attempt }) {
            deps.log?.error(
              { err, projection: projection.name, sequence: batch[0].seq, attempt },
              "projection apply failed",
            );
            for (const m of batch) m.working();
          },
        });
      } catch {
        // Stopped, or rebuilt meanwhile: what this consumer holds belongs to the old tables, and the next lead starts
        // on the new ones.
        return;
      }
      if (stopped) return;
      // Only what this transaction applied is announced: a redelivered event was announced with its first commit.
      const last = applies.at(-1)?.sequence;
      if (last !== undefined) await deps.afterCommit?.(last, applies);
      for (const m of batch) m.ack();
      if (last === undefined) continue;
      applied = Math.max(applied, last);
      for (const wake of waiters) wake();
    }
  }

  async function start(): Promise<void> {
    if (!stopped) return;
    await setupTables();
    await takeUpGeneration();
    applied = await position();
    stopped = false;
    running = runAsLeader({
      db,
      nc: deps.nc,
      key: `projection:${streams.namespace}:${projection.name}`,
      isStopped: () => stopped,
      lead: ({ cutOff }) => consume(cutOff),
      onError: (err) => deps.log?.error({ err, projection: projection.name }, "projection consumer failed; restarting"),
    });
  }

  async function stop(): Promise<void> {
    if (stopped) return;
    stopped = true;
    // stop(), not close(): close() waits on the server and never returns if the connection is already gone.
    // Anything delivered but not acked is simply delivered again.
    messages?.stop();
    await running;
    for (const wake of waiters) wake();
  }

  async function rebuild(): Promise<void> {
    const wasRunning = !stopped;
    await stop();
    await setupTables();
    // Under the checkpoint's lock, which every batch takes first: a batch of the old generation either committed
    // before this, or sees the new generation and is dropped.
    await db.transaction().execute(async (trx) => {
      const { generation: current } = await checkpointRow(trx);
      const next = { sequence: 0, generation: current + 1 };
      await trx
        .insertInto(CHECKPOINTS)
        .values({ name: checkpointName, ...next })
        .onConflict((oc) => oc.column("name").doUpdateSet(next))
        .execute();
    });
    applied = 0;
    if (wasRunning) await start();
    else await takeUpGeneration();
  }

  async function waitFor(sequence: number, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    // What the leader applied itself is known; on a standby, what it saw before may be of the tables before a rebuild.
    while (!leading || applied < sequence) {
      // Another replica may be the one applying: the checkpoint in Postgres is the truth.
      // Read the checkpoint first: `applied` may move on while the query runs, and must not be overwritten with
      // the value it had before (that lost wake-up cost a full poll interval).
      const checkpoint = await position();
      applied = leading ? Math.max(applied, checkpoint) : checkpoint;
      if (applied >= sequence) return;
      if (Date.now() >= deadline) throw new Error(`projection ${projection.name} did not reach ${sequence} in time`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 25);
        waiters.add(wake);
      });
    }
  }

  async function catchUp(timeoutMs = 60_000): Promise<void> {
    const last = await jsm.streams
      .getMessage(stream, { last_by_subj: streams.events.ofType(projection.aggregateType) })
      .catch(() => null);
    if (last) await waitFor(last.seq, timeoutMs);
  }

  const consumer = {
    stream,
    get name() {
      return durableOf(generation);
    },
  };
  return { consumer, start, stop, rebuild, position, waitFor, catchUp };
}
