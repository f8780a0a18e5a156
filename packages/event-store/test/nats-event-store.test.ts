import { randomUUID } from "node:crypto";
import { createTestInfra, type TestInfra } from "@bas/testing";
import { ConcurrencyError, createNatsEventStore, type EventStore, fold } from "../src";
import { counter, type CounterEvent } from "./counter";

let infra: TestInfra;
let store: EventStore;

beforeAll(async () => {
  infra = await createTestInfra();
  store = createNatsEventStore(infra);
});
afterAll(() => infra.close());

const aggregate = () => ({ type: "counter", id: randomUUID() });

test("two concurrent appends at the same expected version: exactly one wins, the other gets ConcurrencyError", async () => {
  const agg = aggregate();
  await store.append(agg, [{ type: "Incremented", data: { by: 1 } }], 0);
  const version = await store.version(agg);
  const results = await Promise.allSettled(
    [2, 3].map((by) => createNatsEventStore(infra).append(agg, [{ type: "Incremented", data: { by } }], version)),
  );
  expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
  const rejected = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
  expect(rejected).toHaveLength(1);
  expect(rejected[0].reason).toBeInstanceOf(ConcurrencyError);
  expect((await store.load(agg)).events).toHaveLength(2);
});

test("an append to a new aggregate at the wrong version is refused", async () => {
  await expect(store.append(aggregate(), [{ type: "Incremented", data: { by: 1 } }], 5)).rejects.toBeInstanceOf(
    ConcurrencyError,
  );
});

test("a retried append with the same event ids (Nats-Msg-Id) is stored once", async () => {
  const agg = aggregate();
  const ids = [randomUUID(), randomUUID()];
  const events: CounterEvent[] = [
    { type: "Incremented", data: { by: 1 } },
    { type: "Incremented", data: { by: 2 } },
  ];
  const first = await store.append(agg, events, 0, { ids });
  const retry = await createNatsEventStore(infra).append(agg, events, 0, { ids });
  expect(retry.version).toBe(first.version);
  const loaded = await createNatsEventStore(infra).load(agg);
  expect(loaded.events.map((e) => e.id)).toEqual(ids);
});

test("loading an aggregate equals folding its events, also when another process appended meanwhile", async () => {
  const agg = aggregate();
  let version = 0;
  for (const by of [1, 2, 3, 4])
    version = (await store.append(agg, [{ type: "Incremented", data: { by } }], version)).version;
  const first = await store.load<CounterEvent>(agg);
  expect(fold(counter, first.events)).toEqual({ total: 10, changes: 4 });
  // Another writer appends; the cached copy must be topped up, not served stale.
  await createNatsEventStore(infra).append(agg, [{ type: "Reset", data: {} }], version);
  const second = await store.load<CounterEvent>(agg);
  const fresh = await createNatsEventStore(infra).load<CounterEvent>(agg);
  expect(second.events.map((e) => e.id)).toEqual(fresh.events.map((e) => e.id));
  expect(fold(counter, second.events)).toEqual({ total: 0, changes: 5 });
  expect(second.events.every((e) => e.aggregateId === agg.id && typeof e.occurredAt === "string")).toBe(true);
});

test("an aggregate with no events loads empty at version 0", async () => {
  expect(await store.load(aggregate())).toEqual({ events: [], version: 0 });
});

test("checkWritable passes against a live server", async () => {
  await expect(store.checkWritable()).resolves.toBeUndefined();
});
