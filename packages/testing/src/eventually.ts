import { setTimeout as sleep } from "node:timers/promises";

/**
 * Polls `read` until `check` holds and returns that value. For what another actor changes (a runner's report, a
 * projection, a reaper): there is no fixed timing to assert, so the deadline is only a safety net.
 */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in time; last value: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}
