import { connect, type NatsConnection } from "@nats-io/transport-node";
import { type StreamNames, streamNames } from "@bas/event-store";
import { natsUrl, testNamespace } from "@bas/testing";
import { createReadCache, type Loaded, type ReadCache } from "./read-cache";

let nc: NatsConnection;
let streams: StreamNames;
let clock: number;
let cache: ReadCache<string>;

beforeEach(async () => {
  nc = await connect({ servers: natsUrl() });
  streams = streamNames(testNamespace());
  clock = 0;
  cache = createReadCache<string>({
    nc,
    streams,
    kinds: ["session-runs"],
    ttlMs: 1_000,
    maxEntries: 100,
    now: () => clock,
  });
});
afterEach(async () => {
  await cache.close();
  await nc.close();
});

/** A load that counts its calls and answers `value` from `sessionId`. */
function counted(value: string, sessionId = "s1", extra: Partial<Loaded<string>> = {}) {
  const load = async () => {
    load.calls++;
    return { value, sessionId, ...extra };
  };
  load.calls = 0;
  return load;
}

/** Announces a change of `sessionId` as the sessions service does, and waits until the cache has heard it. */
async function announce(sessionId: string) {
  nc.publish(streams.changes.subject("session-runs", sessionId));
  await nc.flush();
  await new Promise((r) => setTimeout(r, 50));
}

test("a second read within the time limit is answered from memory; after it, loaded again", async () => {
  const load = counted("running");
  expect(await cache.get("p1", "run-1", load)).toBe("running");
  expect(await cache.get("p1", "run-1", load)).toBe("running");
  expect(load.calls).toBe(1);
  clock += 1_001;
  await cache.get("p1", "run-1", load);
  expect(load.calls).toBe(2);
});

test("a final answer outlives the time limit; a notice about its session still drops it", async () => {
  const load = counted("completed", "s1", { final: true });
  await cache.get("p1", "run-1", load);
  clock += 60 * 60 * 1000;
  await cache.get("p1", "run-1", load);
  expect(load.calls).toBe(1);
  await announce("s1");
  await cache.get("p1", "run-1", load);
  expect(load.calls).toBe(2);
});

test("a notice drops every key read from that session and nothing else", async () => {
  const first = counted("queued", "s1");
  const second = counted("running", "s1");
  const other = counted("running", "s2");
  await cache.get("p1", "run-1", first);
  await cache.get("p1", "run-2", second);
  await cache.get("p1", "run-3", other);
  await announce("s1");
  await Promise.all([
    cache.get("p1", "run-1", first),
    cache.get("p1", "run-2", second),
    cache.get("p1", "run-3", other),
  ]);
  expect([first.calls, second.calls, other.calls]).toEqual([2, 2, 1]);
});

test("an answer loaded while its session changed is not kept, since it may predate the change", async () => {
  let release!: () => void;
  const slow = async () => {
    await new Promise<void>((r) => (release = r));
    return { value: "running", sessionId: "s1" };
  };
  const reading = cache.get("p1", "run-1", slow);
  await announce("s1");
  release();
  expect(await reading).toBe("running");
  const load = counted("completed");
  expect(await cache.get("p1", "run-1", load)).toBe("completed");
  expect(load.calls).toBe(1);
});

test("what may not be kept, another project's entry and a time limit of 0 all load every time", async () => {
  const awaiting = counted("running", "s1", { cacheable: false });
  await cache.get("p1", "run-1", awaiting);
  await cache.get("p1", "run-1", awaiting);
  expect(awaiting.calls).toBe(2);

  const mine = counted("completed", "s2", { final: true });
  await cache.get("p1", "run-2", mine);
  const theirs = counted("not yours", "s2");
  expect(await cache.get("p2", "run-2", theirs)).toBe("not yours");
  expect(theirs.calls).toBe(1);

  const off = createReadCache<string>({
    nc,
    streams,
    kinds: ["session-runs"],
    ttlMs: 0,
    maxEntries: 100,
    now: () => clock,
  });
  const load = counted("completed", "s3", { final: true });
  await off.get("p1", "run-3", load);
  await off.get("p1", "run-3", load);
  expect(load.calls).toBe(2);
  await off.close();
});
