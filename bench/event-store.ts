/**
 * Event store benchmark (issue 2): appends per second with expected-version checks (against plain JetStream publishes
 * in the same run), projection lag (append acknowledged → row committed in Postgres) at a steady 500 events/s, and
 * how many events a projection applies per second when appends come faster than it can apply them, for overlapping
 * three-event appends (as commands append them) against single-event appends in the same run.
 * Run: npx tsx bench/event-store.ts   (DURATION_S to change the length of each phase, default 10)
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import { connectNats } from "@bas/service-kit";
import {
  createDb,
  createNatsEventStore,
  createProjectionRunner,
  ensureStreams,
  type Projection,
  streamNames,
} from "@bas/event-store";
import { benchInfra } from "./support/infra";
import { ms, summarize } from "./support/stats";

const DURATION_S = Number(process.env.DURATION_S ?? 10);
const WRITERS = 32;

async function main() {
  const infra = await benchInfra();
  const nats = await connectNats(infra.natsUrl, "bench");
  const streams = streamNames(`bench${Date.now()}`);
  await ensureStreams(nats.jsm, streams);
  const store = createNatsEventStore({ ...nats, streams });
  const db = createDb<any>(infra.databaseUrl);

  // 1. Baseline: plain publishes to the same stream, same concurrency, no expectations.
  const plain = await timedLoop(async () => {
    await nats.js.publish(streams.events.subject("plain", randomUUID()), JSON.stringify({ type: "Noop", data: {} }));
  });
  // 2. Appends through the event store, each writer on its own aggregate with expected-version checks.
  const versions = new Map<number, { id: string; version: number }>();
  const checked = await timedLoop(async (writer) => {
    const agg = versions.get(writer) ?? { id: randomUUID(), version: 0 };
    const r = await store.append({ type: "bench", id: agg.id }, [{ type: "Ticked", data: { writer } }], agg.version);
    versions.set(writer, { id: agg.id, version: r.version });
  });
  console.log(`appends/s with expected-version checks: ${checked.toFixed(0)}  (${WRITERS} concurrent writers)`);
  console.log(`plain JetStream publishes/s (baseline):  ${plain.toFixed(0)}`);
  console.log(`ratio (checked / plain):                 ${(checked / plain).toFixed(2)}`);

  // 3. Projection lag at a steady 500 events/s.
  // Keyed by event id: the projection may see an event before its append's acknowledgement reaches us.
  const appendedAt = new Map<string, number>();
  let uncommitted: string[] = [];
  const lags: number[] = [];
  const projection: Projection = {
    name: "bench-lag",
    aggregateType: "lag",
    canHandle: ["Ticked"],
    setup: async (d) => {
      await sql`create table if not exists bench_lag (id text primary key, n int not null)`.execute(d);
    },
    teardown: async (d) => {
      await sql`drop table if exists bench_lag`.execute(d);
    },
    apply: async (trx, event) => {
      uncommitted.push(event.id);
      await sql`insert into bench_lag (id, n) values (${event.aggregateId}, 1)
        on conflict (id) do update set n = bench_lag.n + 1`.execute(trx);
    },
  };
  const runner = createProjectionRunner({
    ...nats,
    db,
    streams,
    projection,
    // Called once per committed batch with its last sequence: every event up to it is now visible.
    afterCommit: () => {
      const now = performance.now();
      for (const id of uncommitted) lags.push(now - appendedAt.get(id)!);
      uncommitted = [];
    },
  });
  await runner.start();
  const rate = 500;
  const total = rate * DURATION_S;
  const started = performance.now();
  const ids = Array.from({ length: 50 }, () => ({ id: randomUUID(), version: 0 }));
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const agg = ids[i % ids.length];
    const eventId = randomUUID();
    appendedAt.set(eventId, performance.now());
    inFlight.push(
      (async () => {
        const r = await store.append({ type: "lag", id: agg.id }, [{ type: "Ticked", data: {} }], agg.version, {
          ids: [eventId],
        });
        agg.version = r.version;
      })(),
    );
    if (inFlight.length >= ids.length) await Promise.all(inFlight.splice(0));
  }
  await Promise.all(inFlight);
  const last = Math.max(...ids.map((a) => a.version));
  await runner.waitFor(last, 60_000);
  const achieved = total / ((performance.now() - started) / 1000);
  const s = summarize(lags);
  console.log(
    `projection lag at ${rate} events/s (achieved ${achieved.toFixed(0)}/s, n=${s.n}): p50 ${ms(s.p50)}, p99 ${ms(s.p99)}`,
  );

  await runner.stop();

  // 4. A projection that cannot keep up: appends of three events from 8 writers at once overlap without a break, so
  // its batches rarely end on a whole append; against single-event appends.
  const single = await underLoad(nats, db, streams, store, 1);
  const triple = await underLoad(nats, db, streams, store, 3);
  console.log(`projection under overload, single-event appends (baseline): ${single.toFixed(0)} events/s applied`);
  console.log(`projection under overload, three-event appends:             ${triple.toFixed(0)} events/s applied`);
  console.log(`ratio (three / single):                                      ${(triple / single).toFixed(2)}`);

  await db.destroy();
  await nats.nc.drain();
  await infra.close();
}

/**
 * A projection kept busy: 8 writers append `perAppend` events at a time (each to a new aggregate) as fast as they can
 * for DURATION_S seconds while it applies them; events applied per second, from the first append until it has them all.
 */
async function underLoad(
  nats: Awaited<ReturnType<typeof connectNats>>,
  db: ReturnType<typeof createDb<any>>,
  streams: ReturnType<typeof streamNames>,
  store: ReturnType<typeof createNatsEventStore>,
  perAppend: number,
): Promise<number> {
  const type = `busy${perAppend}`;
  const table = sql.table(`bench_${type}`);
  const runner = createProjectionRunner({
    ...nats,
    db,
    streams,
    projection: {
      name: `bench-${type}`,
      aggregateType: type,
      canHandle: ["Ticked"],
      setup: async (d) => {
        await sql`create table if not exists ${table} (id text primary key, n int not null)`.execute(d);
      },
      teardown: async (d) => {
        await sql`drop table if exists ${table}`.execute(d);
      },
      apply: async (trx, event) => {
        await sql`insert into ${table} (id, n) values (${event.aggregateId}, 1)
          on conflict (id) do update set n = ${table}.n + 1`.execute(trx);
      },
    },
  });
  await runner.start();
  const started = performance.now();
  const end = started + DURATION_S * 1000;
  let last = 0;
  let appended = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < end) {
        const events = Array.from({ length: perAppend }, () => ({ type: "Ticked", data: {} }));
        last = Math.max(last, (await store.append({ type, id: randomUUID() }, events, 0)).version);
        appended += perAppend;
      }
    }),
  );
  await runner.waitFor(last, 300_000);
  const seconds = (performance.now() - started) / 1000;
  await runner.stop();
  return appended / seconds;
}

/** Runs `op` from WRITERS concurrent loops for DURATION_S seconds; returns operations per second. */
async function timedLoop(op: (writer: number) => Promise<void>): Promise<number> {
  const end = performance.now() + DURATION_S * 1000;
  let count = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      while (performance.now() < end) {
        await op(writer);
        count++;
      }
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
