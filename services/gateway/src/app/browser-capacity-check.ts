import type { browserPool } from "@bas/proto";
import { ClientError, type PromiseClient } from "@bas/service-kit";

/** Refuses a new session when the project's browser quota is already used (browser-pool answers `limit_exceeded`). */
export type BrowserCapacityCheck = (projectId: string) => Promise<void>;

/**
 * Asks browser-pool before a new session is created, so that a session that could never get a browser is a clear
 * 429 now rather than a session that ends `error` later. Only a full quota refuses: without a browser-pool
 * configured, or with browser-pool not answering, the session is created and its runner waits for a browser like any
 * other (a short outage must not fail work).
 */
export function createBrowserCapacityCheck(
  client: PromiseClient<InstanceType<typeof browserPool.BrowserPoolClient>> | undefined,
  log: { warn(o: object, msg: string): void },
): BrowserCapacityCheck {
  if (!client) return async () => {};
  return async (projectId) => {
    try {
      await client.requireBrowserCapacity({ projectId }, { deadlineMs: 2_000 });
    } catch (err) {
      if (err instanceof ClientError && err.kind === "limit_exceeded") throw err;
      log.warn(
        { err, projectId },
        "browser capacity unknown (browser-pool did not answer); creating the session anyway",
      );
    }
  };
}
