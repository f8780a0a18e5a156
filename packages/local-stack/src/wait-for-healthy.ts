import { setTimeout as sleep } from "node:timers/promises";

/**
 * Polls the gateway's /healthz until it answers 200 and the gateway answering is this stack's own: it must list
 * sessions with the stack's API key (another instance on the same port would answer /healthz just as well).
 */
export async function waitForHealthy(baseUrl: string, apiKey: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(3_000) });
      if (res.status === 200 && (await isOwnGateway(baseUrl, apiKey))) return;
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      if (err instanceof NotOurGatewayError) throw err;
      last = (err as Error).message;
    }
    await sleep(250);
  }
  throw new Error(`the stack did not become healthy within ${timeoutMs / 1000} s; last /healthz answer: ${last}`);
}

class NotOurGatewayError extends Error {}

/** Ours answers a list with the stack's key: 200. A 401 is another instance; anything else, not ready yet. */
async function isOwnGateway(baseUrl: string, apiKey: string): Promise<boolean> {
  const res = await fetch(`${baseUrl}/api/v3/sessions?pageSize=1`, {
    headers: { "X-Service-API-Key": apiKey },
    signal: AbortSignal.timeout(3_000),
  });
  if (res.status === 401) {
    throw new NotOurGatewayError(
      `another service answers at ${baseUrl}: it refuses this stack's API key. Stop it, or start with PORT=<another>`,
    );
  }
  return res.status === 200;
}
