import type { HTTPRequest, Page } from "puppeteer-core";

export interface SettleOptions {
  /** Time for an action's effects (a navigation, a fetch) to begin. */
  graceMs?: number;
  /** How long the network must stay quiet. */
  quietMs?: number;
  /** Upper bound; a page that never goes quiet (polling, streaming) does not block the agent. */
  maxMs?: number;
}

export interface PageActivity {
  /** Resolves once navigation and network have settled, or after `maxMs`. */
  settle(options?: SettleOptions, signal?: AbortSignal): Promise<void>;
  dispose(): void;
}

// Long-lived connections never finish; they must not keep the agent waiting.
const IGNORED_TYPES = new Set(["websocket", "eventsource", "media", "ping", "prefetch", "other"]);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Watches a tab's requests so the agent can wait for what an action started, and no longer than that. */
export function trackPageActivity(page: Page, now: () => number = Date.now): PageActivity {
  const inflight = new Map<HTTPRequest, number>();
  let lastActivity = 0;
  let navigating = false;

  const onRequest = (request: HTTPRequest) => {
    if (IGNORED_TYPES.has(request.resourceType())) return;
    inflight.set(request, now());
    lastActivity = now();
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) navigating = true;
  };
  const onDone = (request: HTTPRequest) => {
    if (inflight.delete(request)) lastActivity = now();
    if (request.isNavigationRequest() && request.failure()) navigating = false;
  };
  const onLoaded = () => {
    navigating = false;
    lastActivity = now();
  };
  page.on("request", onRequest);
  page.on("requestfinished", onDone);
  page.on("requestfailed", onDone);
  page.on("domcontentloaded", onLoaded);

  return {
    async settle(options = {}, signal) {
      const { graceMs = 30, quietMs = 60, maxMs = 5_000 } = options;
      const start = now();
      await sleep(graceMs);
      while (!signal?.aborted && now() - start < maxMs) {
        // Requests stuck for longer than the bound are background traffic; forget them.
        for (const [request, since] of inflight) if (now() - since > maxMs) inflight.delete(request);
        if (!navigating && inflight.size === 0 && now() - lastActivity >= quietMs) return;
        await sleep(15);
      }
    },
    dispose() {
      page.off("request", onRequest);
      page.off("requestfinished", onDone);
      page.off("requestfailed", onDone);
      page.off("domcontentloaded", onLoaded);
    },
  };
}
