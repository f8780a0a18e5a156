import type { WindowSize } from "../domain/browser-settings";
import type { Launched } from "./ports";
import { createWarmPool } from "./warm-pool";

const DEFAULT = { width: 1920, height: 1080 };
const SMALL = { width: 1280, height: 720 };

/** A pool of two whose launches are counted; the browsers are stand-ins that only need to report an exit. */
function countedPool(options: { spareRefillDelayMs?: number; resizes?: boolean } = {}) {
  const launched: string[] = [];
  const sizes: string[] = [];
  const disposed: string[] = [];
  const exits = new Map<string, (detail: string) => void>();
  let next = 0;
  const pool = createWarmPool({
    size: 2,
    newId: () => `b${next++}`,
    async launch(id, window: WindowSize) {
      launched.push(id);
      sizes.push(`${window.width}x${window.height}`);
      return {
        id,
        window,
        running: { onExit: (listener: (detail: string) => void) => exits.set(id, listener) },
        dispose: async () => void disposed.push(id),
      } as unknown as Launched;
    },
    log: { info: () => undefined, warn: () => undefined },
    refillDelayMs: 0,
    spareRefillDelayMs: 60_000,
    ...options,
  });
  return { pool, launched, sizes, disposed, exit: (id: string) => exits.get(id)?.("gone") };
}

async function until(check: () => boolean) {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
}

test("while an idle browser remains, the refill waits; the take that empties the pool starts it at once", async () => {
  const { pool, launched } = countedPool();
  pool.start();
  await pool.filled();
  expect(launched).toEqual(["b0", "b1"]);

  expect(pool.take(DEFAULT)?.id).toBe("b0");
  // The caller's first page falls in the refill's wait: nothing launches while the other browser is there to take.
  await new Promise((r) => setTimeout(r, 50));
  expect(launched).toHaveLength(2);

  expect(pool.take(DEFAULT)?.id).toBe("b1");
  await until(() => launched.length === 4);
  await pool.filled();
  expect(pool.ids()).toEqual(["b2", "b3"]);
  await pool.close();
});

test("a browser taken for a request refused before it was used is put back first in line, unless it died meanwhile", async () => {
  const { pool, launched, disposed, exit } = countedPool();
  pool.start();
  await pool.filled();
  const taken = pool.take(DEFAULT);
  if (!taken) throw new Error("no idle browser");
  pool.putBack(taken);
  expect(pool.ids()).toEqual(["b0", "b1"]);
  // Back in the pool, it is still watched: it dies and is replaced.
  exit("b0");
  expect(disposed).toEqual(["b0"]);
  await until(() => pool.idle === 2);

  const again = pool.take(DEFAULT);
  if (!again) throw new Error("no idle browser");
  exit(again.id);
  pool.putBack(again);
  expect(pool.ids()).not.toContain(again.id);
  expect(disposed).toEqual(["b0", again.id]);
  await pool.filled();
  expect(launched).toHaveLength(4);
  await pool.close();
});

test("the refill shares its sizes out by the latest requests, and a caller gets a browser of its size first", async () => {
  const { pool, sizes } = countedPool();
  pool.start();
  await pool.filled();
  // None has that size yet: the one needed least goes (resized when handed out), and each size has one request.
  expect(pool.take(SMALL)?.id).toBe("b0");
  expect(pool.take(DEFAULT)?.id).toBe("b1");
  await pool.filled();
  expect(sizes).toEqual(["1920x1080", "1920x1080", "1280x720", "1920x1080"]);

  // The browser of the asked size goes, though another waited longer.
  expect(pool.take(DEFAULT)?.id).toBe("b3");
  expect(pool.take(SMALL)?.id).toBe("b2");
  await pool.filled();
  expect(sizes.slice(4)).toEqual(["1920x1080", "1280x720"]);
  await pool.close();
});

test("where browsers cannot be resized, a request finds only its own size, and the pool turns to the sizes asked for", async () => {
  const { pool, sizes, disposed } = countedPool({ spareRefillDelayMs: 0, resizes: false });
  pool.start();
  await pool.filled();
  expect(sizes).toEqual(["1920x1080", "1920x1080"]);

  // None of that size: the caller launches cold, and an idle browser of a size nobody asked for makes way for it.
  expect(pool.take(SMALL)).toBeUndefined();
  expect(disposed).toEqual(["b0"]);
  await until(() => sizes.length === 3);
  await pool.filled();
  expect(sizes[2]).toBe("1280x720");
  expect(pool.take(SMALL)?.id).toBe("b2");
  expect(pool.take(DEFAULT)?.id).toBe("b1");
  expect(disposed).toEqual(["b0"]);
  await pool.close();
});

test("where browsers cannot be resized, a size asked for once takes no place of one asked for often", async () => {
  const { pool, sizes, disposed } = countedPool({ spareRefillDelayMs: 0, resizes: false });
  pool.start();
  await pool.filled();
  for (let round = 0; round < 3; round++) {
    expect(pool.take(DEFAULT)).toBeDefined();
    await pool.filled();
  }
  const launches = sizes.length;

  expect(pool.take({ width: 1366, height: 768 })).toBeUndefined();
  await new Promise((r) => setTimeout(r, 20));
  expect(disposed).toEqual([]);
  expect(sizes).toHaveLength(launches);
  expect(pool.take(DEFAULT)).toBeDefined();
  await pool.close();
});
