import { setTimeout as sleep } from "node:timers/promises";

/** Polls the gateway's /healthz until it answers 200; the last answer is in the error when time runs out. */
export async function waitForHealthy(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
      if (res.status === 200) return;
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(250);
  }
  throw new Error(`the stack did not become healthy within ${timeoutMs / 1000} s; last /healthz answer: ${last}`);
}
