import { browserPool, type sessions } from "@bas/proto";
import { connectClient } from "@bas/service-kit";

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
  ): Promise<AcquiredSessionBrowser>;
  close(): void;
}

export function connectBrowserPool(address: string): SessionBrowsers {
  // Launching a cold browser can take a few seconds on a busy machine.
  const client = connectClient(browserPool.BrowserPoolClient, address, 60_000);
  return {
    async acquire(projectId, sessionId, settings) {
      const acquired = await client.acquireBrowser({ projectId, sessionId, settings });
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
