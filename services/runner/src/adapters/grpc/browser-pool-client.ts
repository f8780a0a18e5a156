import { browserPool, type sessions } from "@bas/proto";
import { ClientError, connectClient, onReplicaWithRoom } from "@bas/service-kit";

/** Browser-pool refused the session a browser: the project's quota, or the node's capacity, is used up. */
export class NoBrowserError extends Error {
  override name = "NoBrowserError";
}

export interface AcquiredSessionBrowser {
  browserId: string;
  liveUrl?: string;
  /** CDP WebSocket endpoint inside the deployment. */
  cdpUrl: string;
}

export interface SessionBrowsers {
  /** The session's browser (the same one for every task of a keep-alive session). */
  acquire(
    projectId: string,
    sessionId: string,
    settings: sessions.BrowserSettings | undefined,
    /** The session was reopened after it ended: browser-pool gives it a new browser. */
    reopened?: boolean,
  ): Promise<AcquiredSessionBrowser>;
  close(): void;
}

/** `replicas`: how many browser-pool replicas `address` reaches; a browser a full one refuses is asked of the next. */
export function connectBrowserPool(address: string, replicas = 1): SessionBrowsers {
  // Launching a cold browser can take a few seconds on a busy machine.
  const client = connectClient(browserPool.BrowserPoolClient, address, 60_000);
  return {
    async acquire(projectId, sessionId, settings, reopened) {
      const request = { projectId, sessionId, settings, ...(reopened ? { reopened } : {}) };
      const acquire = () => client.acquireBrowser(request);
      const acquired = await onReplicaWithRoom(acquire, replicas).catch((err: unknown) => {
        // A quota or capacity refusal ends up in the session's summary: in browser-pool's own words, which say
        // what to do, without the gRPC status in front.
        if (err instanceof ClientError && (err.kind === "limit_exceeded" || err.kind === "at_capacity")) {
          throw new NoBrowserError(err.details, { cause: err });
        }
        throw err;
      });
      const browser = acquired.browser;
      return {
        browserId: browser?.id ?? "",
        ...(browser?.liveUrl ? { liveUrl: browser.liveUrl } : {}),
        cdpUrl: acquired.internalCdpUrl || browser?.cdpUrl || "",
      };
    },
    close: () => client.close(),
  };
}
