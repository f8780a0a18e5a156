import { randomUUID } from "node:crypto";
import { createTestInfra, type TestInfra } from "@bas/testing";
import { createNatsEventStore, fold, handleCommand } from "../src";
import { counter, type CounterEvent } from "./counter";

let infra: TestInfra;
beforeAll(async () => {
  infra = await createTestInfra();
});
afterAll(() => infra.close());

test("concurrent commands on one aggregate all land: the loser of each race decides again on the new state", async () => {
  const agg = { type: "counter", id: randomUUID() };
  // Separate stores: separate caches, as separate processes would have.
  await Promise.all(
    [1, 2, 3, 4, 5].map((by) =>
      handleCommand(createNatsEventStore(infra), counter, agg, { type: "Increment", by }, { maxAttempts: 10 }),
    ),
  );
  const loaded = await createNatsEventStore(infra).load<CounterEvent>(agg);
  expect(fold(counter, loaded.events)).toEqual({ total: 15, changes: 5 });
});

test("a command the decider turns into no events appends nothing", async () => {
  const store = createNatsEventStore(infra);
  const agg = { type: "counter", id: randomUUID() };
  const result = await handleCommand(store, counter, agg, { type: "Reset" });
  expect(result.events).toEqual([]);
  expect(await store.version(agg)).toBe(0);
});

test("the returned state equals the state rebuilt from the stream", async () => {
  const store = createNatsEventStore(infra);
  const agg = { type: "counter", id: randomUUID() };
  await handleCommand(store, counter, agg, { type: "Increment", by: 4 });
  const { state, version } = await handleCommand(store, counter, agg, { type: "Increment", by: 6 });
  const fresh = await createNatsEventStore(infra).load<CounterEvent>(agg);
  expect(fresh.version).toBe(version);
  expect(fold(counter, fresh.events)).toEqual(state);
});

test("a fresh aggregate is decided without reading it; were its id in use after all, the command is decided again on what is there", async () => {
  const store = createNatsEventStore(infra);
  const agg = { type: "counter", id: randomUUID() };
  const first = await handleCommand(store, counter, agg, { type: "Increment", by: 2 }, { fresh: true });
  expect(first.state).toEqual({ total: 2, changes: 1 });
  // Taken for fresh though it has events: the append loses its race, the next attempt reads them.
  const again = await handleCommand(
    createNatsEventStore(infra),
    counter,
    agg,
    { type: "Increment", by: 3 },
    { fresh: true },
  );
  expect(again.state).toEqual({ total: 5, changes: 2 });
  // The store that appended to the new aggregate knows all of it, so its next command builds on the cached events.
  const third = await handleCommand(store, counter, agg, { type: "Increment", by: 1 });
  expect(third.state).toEqual({ total: 6, changes: 3 });
  expect(fold(counter, (await createNatsEventStore(infra).load<CounterEvent>(agg)).events)).toEqual(third.state);
});
