import type { Launched } from "./ports";
import { createWarmPool } from "./warm-pool";

/** A pool of two whose launches are counted; the browsers are stand-ins that only need to report an exit. */
function countedPool() {
  const launched: string[] = [];
  let next = 0;
  const pool = createWarmPool({
    size: 2,
    newId: () => `b${next++}`,
    async launch(id) {
      launched.push(id);
      return { id, running: { onExit: () => undefined }, dispose: async () => undefined } as unknown as Launched;
    },
    log: { info: () => undefined, warn: () => undefined },
    refillDelayMs: 0,
    spareRefillDelayMs: 60_000,
  });
  return { pool, launched };
}

async function until(check: () => boolean) {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
}

test("while an idle browser remains, the refill waits; the take that empties the pool starts it at once", async () => {
  const { pool, launched } = countedPool();
  pool.start();
  await pool.filled();
  expect(launched).toEqual(["b0", "b1"]);

  expect(pool.take()?.id).toBe("b0");
  // The caller's first page falls in the refill's wait: nothing launches while the other browser is there to take.
  await new Promise((r) => setTimeout(r, 50));
  expect(launched).toHaveLength(2);

  expect(pool.take()?.id).toBe("b1");
  await until(() => launched.length === 4);
  await pool.filled();
  expect(pool.ids()).toEqual(["b2", "b3"]);
  await pool.close();
});
