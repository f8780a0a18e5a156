import { randomUUID } from "node:crypto";
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { createTestInfra, eventually, natsUrl, startSeverableLink, type TestInfra } from "@bas/testing";
import { sql } from "kysely";
import { createNatsEventStore, createProjectionRunner, type EventStore, type ProjectionRunner } from "../src";
import type { CounterEvent } from "./counter";
import { counterProjection, snapshot } from "./counter-projection";

let infra: TestInfra;
let store: EventStore;
const runners: ProjectionRunner[] = [];

beforeAll(async () => {
  infra = await createTestInfra();
  store = createNatsEventStore(infra);
});
const closeAfterTest: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop()));
  for (const close of closeAfterTest.splice(0)) await close();
});
afterAll(() => infra.close());

async function appendHistory(count: number): Promise<number> {
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  const versions = new Map<string, number>();
  let last = 0;
  for (let i = 0; i < count; i++) {
    const id = ids[i % ids.length];
    const event: CounterEvent =
      i % 7 === 6 ? { type: "Reset", data: {} } : { type: "Incremented", data: { by: i + 1 } };
    const result = await store.append({ type: "counter", id }, [event], versions.get(id) ?? 0);
    versions.set(id, result.version);
    last = result.version;
  }
  return last;
}

function runner(table: string, extra: Partial<Parameters<typeof createProjectionRunner>[0]> = {}) {
  const r = createProjectionRunner({ ...infra, projection: counterProjection(table), ackWaitMs: 1_000, ...extra });
  runners.push(r);
  return r;
}

/** The table goes wrong (as after a bug in a projection), then is rebuilt the way docs/operate.md says, by hand. */
async function corruptThenRebuildByHand(table: string) {
  await sql`update ${sql.table(table)} set total = -1`.execute(infra.db);
  await sql`update projection_checkpoints set sequence = 0, generation = generation + 1
    where name = ${`${infra.namespace}/counter-${table}`}`.execute(infra.db);
}

/** A replica that reaches NATS through a link the test cuts and restores. */
async function replicaBehindLink(table: string) {
  const nats = new URL(natsUrl());
  const link = await startSeverableLink({ host: nats.hostname, port: Number(nats.port) });
  const nc = await connect({ servers: link.address, reconnectTimeWait: 100, maxReconnectAttempts: -1 });
  closeAfterTest.push(async () => {
    await nc.close();
    await link.close();
  });
  return {
    replica: runner(table, { nc, js: jetstream(nc), jsm: await jetstreamManager(nc) }),
    cut: () => link.cut(),
    /** Resolves once the replica is connected again. */
    async restore() {
      link.restore();
      const connected = () =>
        nc.flush().then(
          () => true,
          () => false,
        );
      await eventually(connected, Boolean, 10_000);
    },
  };
}

test("a projection killed between applying and acking, then restarted, matches a clean replay with no duplicate effect", async () => {
  const last = await appendHistory(30);

  // A separate connection we can cut dead, as a crashed process would: the commit happened, the ack never leaves.
  const doomed = await connect({ servers: natsUrl() });
  let crashed = false;
  const crashing = createProjectionRunner({
    nc: doomed,
    js: jetstream(doomed),
    jsm: await jetstreamManager(doomed),
    db: infra.db,
    streams: infra.streams,
    projection: counterProjection("crash"),
    ackWaitMs: 1_000,
    afterCommit: async (seq) => {
      if (seq >= 12 && !crashed) {
        crashed = true;
        await doomed.close();
        throw new Error("process died");
      }
    },
  });
  await crashing.start();
  while (!crashed) await new Promise((r) => setTimeout(r, 20));
  await crashing.stop();

  const restarted = runner("crash");
  await restarted.start();
  await restarted.waitFor(last, 20_000);

  const clean = runner("clean");
  await clean.start();
  await clean.waitFor(last, 20_000);

  const crashedTables = await snapshot(infra.db, "crash");
  expect(crashedTables).toEqual(await snapshot(infra.db, "clean"));
  expect(crashedTables.history).toHaveLength(30);
});

test("rebuilding from sequence zero gives identical tables", async () => {
  const last = await appendHistory(20);
  const r = runner("rebuild");
  await r.start();
  await r.waitFor(last, 20_000);
  const before = await snapshot(infra.db, "rebuild");

  await r.rebuild();
  await r.waitFor(last, 20_000);
  expect(await snapshot(infra.db, "rebuild")).toEqual(before);
  expect(await r.position()).toBeGreaterThanOrEqual(last);
});

test("a rebuild on a standby replica while the leader holds events it has not applied gives the tables of a clean replay", async () => {
  // The leader applies slowly, so that it has pulled far more events than it has applied when the rebuild comes.
  let slow = true;
  const counters = counterProjection("live");
  const leader = runner("live", {
    projection: {
      ...counters,
      async apply(trx, event) {
        if (slow) await new Promise((r) => setTimeout(r, 5));
        await counters.apply(trx, event);
      },
    },
  });
  await leader.start();
  const standby = runner("live");
  await standby.start();
  const last = await appendHistory(400);
  while ((await leader.position()) === 0) await new Promise((r) => setTimeout(r, 20));

  await standby.rebuild();
  slow = false;
  await standby.waitFor(last, 30_000);
  const clean = runner("live-clean");
  await clean.start();
  await clean.waitFor(last, 30_000);
  expect(await snapshot(infra.db, "live")).toEqual(await snapshot(infra.db, "live-clean"));
  // Only the new generation's consumer is left.
  expect(standby.consumer.name).toBe("proj_counter-live_g1");
  await expect(infra.jsm.consumers.info(infra.streams.events.stream, "proj_counter-live")).rejects.toThrow();
});

test("a rebuild by hand, one update of the checkpoint, is taken up by the running leader, also with no event coming", async () => {
  const last = await appendHistory(30);
  const r = runner("by-hand");
  await r.start();
  await r.waitFor(last, 20_000);
  const before = await snapshot(infra.db, "by-hand");
  // The table goes wrong (as after a bug in a projection): the rebuild sets it right from the events.
  await corruptThenRebuildByHand("by-hand");
  await eventually(
    async () => r.consumer.name,
    (name) => name === "proj_counter-by-hand_g1",
    20_000,
  );
  await r.waitFor(last, 20_000);
  expect(await snapshot(infra.db, "by-hand")).toEqual(before);
});

test("only one of two replicas applies events, and the projection continues when that one stops", async () => {
  const first = await appendHistory(10);
  const a = runner("replicas");
  const b = runner("replicas");
  await Promise.all([a.start(), b.start()]);
  await a.waitFor(first, 20_000);
  await a.stop();
  const second = await appendHistory(10);
  await b.waitFor(second, 20_000);
  const tables = await snapshot(infra.db, "replicas");
  // Every counter event in the stream is applied exactly once (the history table refuses duplicates).
  expect(tables.history.length).toBeGreaterThanOrEqual(20);
  expect(new Set(tables.history.map((h: any) => String(h.sequence))).size).toBe(tables.history.length);
});

test("the events of one append are applied in one transaction, also among others' appends: a reader never sees half a command", async () => {
  const batches: (readonly { aggregateId: string; commit?: { index: number; size: number } }[])[] = [];
  const r = runner("commits", {
    afterCommit: (_seq, events) => {
      batches.push(events);
    },
  });
  await r.start();
  const mine = new Set<string>();
  let last = 0;
  // Ten appends at a time: their events interleave in the stream (each append publishes its events one by one).
  for (let round = 0; round < 8; round++) {
    const appended = await Promise.all(
      Array.from({ length: 10 }, () => {
        const events: CounterEvent[] = [
          { type: "Incremented", data: { by: 1 } },
          { type: "Incremented", data: { by: 2 } },
          { type: "Reset", data: {} },
        ];
        const id = randomUUID();
        mine.add(id);
        return store.append({ type: "counter", id }, events, 0);
      }),
    );
    last = Math.max(last, ...appended.map((a) => a.version));
  }
  await r.waitFor(last, 20_000);
  expect(batches.flat().filter((e) => mine.has(e.aggregateId))).toHaveLength(240);
  // In every batch, each aggregate's events end with a whole append: never with the first or second of three.
  for (const batch of batches) {
    const lastOf = new Map(batch.map((e) => [e.aggregateId, e]));
    for (const e of lastOf.values()) expect(e.commit === undefined || e.commit.index === e.commit.size - 1).toBe(true);
  }
});

test("an event delivered again after a late ack is applied and announced once", async () => {
  // The first batch's announcement outlasts the ack wait: JetStream delivers its messages again, behind later ones.
  const announced: number[] = [];
  let first = true;
  const r = runner("late-ack", {
    afterCommit: async (_seq, events) => {
      announced.push(...events.map((e) => e.sequence));
      if (first) {
        first = false;
        await new Promise((resolve) => setTimeout(resolve, 2_500));
      }
    },
  });
  await r.start();
  const last = await appendHistory(20);
  await r.waitFor(last, 20_000);
  const more = await appendHistory(5);
  await r.waitFor(more, 20_000);
  expect(new Set(announced).size).toBe(announced.length);
  const { history } = await snapshot(infra.db, "late-ack");
  expect(history.map((h: any) => Number(h.sequence)).sort((a: number, b: number) => a - b)).toEqual(
    [...announced].sort((a, b) => a - b),
  );
});

test("bursts are applied at once, also the one during which the consumer asks the server for more", async () => {
  // After 128 messages the consumer queues a pull request among the messages it received: a batch must still end
  // with the last message there is, not wait for one more. Redelivery would take a minute, so a batch held back shows
  // as a missed deadline (it did: the fourth burst waited for the ack wait to run out). A stream of its own, so that
  // the count of messages the consumer has received is the test's.
  const own = await createTestInfra();
  const ownStore = createNatsEventStore(own);
  const r = createProjectionRunner({ ...own, projection: counterProjection("bursts"), ackWaitMs: 60_000 });
  try {
    await r.start();
    for (let burst = 0; burst < 8; burst++) {
      const appended = await Promise.all(
        Array.from({ length: 40 }, () =>
          ownStore.append({ type: "counter", id: randomUUID() }, [{ type: "Incremented", data: { by: 1 } }], 0),
        ),
      );
      await r.waitFor(Math.max(...appended.map((a) => a.version)), 20_000);
    }
    expect((await snapshot(own.db, "bursts")).history).toHaveLength(320);
  } finally {
    await r.stop();
    await own.close();
  }
});

test("a leader cut off from NATS gives up the lead: a replica that reaches NATS applies the events meanwhile", async () => {
  const { replica: cutOff, cut, restore } = await replicaBehindLink("cut-off");
  await cutOff.start();
  await cutOff.waitFor(await appendHistory(5), 20_000);
  const other = runner("cut-off");
  await other.start();

  cut();
  // Without giving up the lead, the cut-off replica keeps it (its Postgres connection is fine) and nothing is applied
  // until it is back.
  await other.waitFor(await appendHistory(5), 20_000);

  // Back on NATS, it stands by, and leads again once the other stops.
  await restore();
  await other.stop();
  await cutOff.waitFor(await appendHistory(5), 20_000);
  const tables = await snapshot(infra.db, "cut-off");
  expect(new Set(tables.history.map((h: any) => String(h.sequence))).size).toBe(tables.history.length);
}, 60_000);

test("a replica that led before and stands by now waits for a rebuild elsewhere: what it applied is of the old tables", async () => {
  const { replica: former, cut, restore } = await replicaBehindLink("former");
  await former.start();
  const last = await appendHistory(20);
  await former.waitFor(last, 20_000);
  const before = await snapshot(infra.db, "former");
  // The lead moves to the other replica (cut off, then back, the former leader stands by).
  const other = runner("former");
  await other.start();
  cut();
  await other.waitFor(await appendHistory(1), 20_000);
  await restore();

  // The table goes wrong and is rebuilt by hand; the leader replays it.
  await corruptThenRebuildByHand("former");
  await former.waitFor(last, 20_000);
  const rebuilt = await snapshot(infra.db, "former");
  expect(rebuilt.rows.filter((row: any) => row.total === -1)).toEqual([]);
  expect(rebuilt.history.slice(0, before.history.length)).toEqual(before.history);
}, 60_000);

test("a checkpoint table from before generations gains the column in place: the projection goes on from its checkpoint", async () => {
  const own = await createTestInfra();
  try {
    const ownStore = createNatsEventStore(own);
    const id = randomUUID();
    const first = await ownStore.append({ type: "counter", id }, [{ type: "Incremented", data: { by: 1 } }], 0);
    // As a release before generations left it: its table, its checkpoint, its consumer's name.
    await sql`create table projection_checkpoints (name text primary key, sequence bigint not null)`.execute(own.db);
    await sql`insert into projection_checkpoints values (${`${own.namespace}/counter-upgraded`}, ${first.version})`.execute(
      own.db,
    );
    const r = createProjectionRunner({ ...own, projection: counterProjection("upgraded"), ackWaitMs: 1_000 });
    try {
      await r.start();
      expect(r.consumer.name).toBe("proj_counter-upgraded");
      const second = await ownStore.append({ type: "counter", id }, [{ type: "Incremented", data: { by: 2 } }], 1);
      await r.waitFor(second.version, 20_000);
      // Only the event after the checkpoint was applied.
      expect((await snapshot(own.db, "upgraded")).history.map((h: any) => Number(h.sequence))).toEqual([
        second.version,
      ]);
    } finally {
      await r.stop();
    }
  } finally {
    await own.close();
  }
});
