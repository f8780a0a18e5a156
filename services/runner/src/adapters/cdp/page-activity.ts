import type { HTTPRequest, Page } from "puppeteer-core";

export interface SettleOptions {
  /** How long the network and the DOM must stay quiet. */
  quietMs?: number;
  /** Upper bound; a page that never goes quiet (polling, streaming) does not block the agent. */
  maxMs?: number;
}

export interface PageActivity {
  /** Resolves once what the last action started (navigation, requests, rendering) has settled, or after `maxMs`. */
  settle(options?: SettleOptions, signal?: AbortSignal): Promise<void>;
  dispose(): void;
}

/**
 * Runs in every document before its own scripts (with the tabs' hook): counts the navigations the document starts
 * (the Navigation API's `navigate` fires as a link, a form or a script starts one, before any request is made) and
 * notes when the DOM last changed, so settling can ask the page instead of sleeping.
 */
export const PAGE_ACTIVITY_HOOK = `(() => {
  if (window.__basActivity) return;
  const state = { leaving: 0, changedAt: 0 };
  Object.defineProperty(window, "__basActivity", { value: state });
  window.navigation?.addEventListener("navigate", (e) => { if (!e.destination.sameDocument) state.leaving++; });
  // A document back from the back/forward cache is shown again: whatever it started before is over.
  addEventListener("pageshow", () => { state.leaving = 0; });
  new MutationObserver(() => { state.changedAt = performance.now(); })
    .observe(document, { childList: true, subtree: true, characterData: true });
})();`;

// Long-lived connections never finish; they must not keep the agent waiting.
const IGNORED_TYPES = new Set(["websocket", "eventsource", "media", "ping", "prefetch", "other"]);
/** A page that keeps changing its DOM (a ticker, an animation) is waited for this long at most once idle. */
const DOM_QUIET_MAX_MS = 250;
/** How long the browser may take to announce the request of a navigation the page said it started. */
const NAVIGATION_START_MS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface PageProbe {
  /** Navigations to another document this document started since the last probe. */
  leaving: number;
  /** Milliseconds since the DOM last changed. */
  quietFor: number;
}

/**
 * One round trip into the page, answered after the tasks already queued there ran (a click handler's timers and
 * fetches): by the time it answers, the CDP events of what those started have arrived. Undefined when the document
 * went away meanwhile (a navigation) or did not answer in time.
 */
async function probe(page: Page, timeoutMs: number): Promise<PageProbe | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  const answer = page
    .evaluate(
      () =>
        new Promise<PageProbe>((resolve) =>
          setTimeout(() => {
            const state = (window as unknown as { __basActivity?: { leaving: number; changedAt: number } })
              .__basActivity;
            const leaving = state?.leaving ?? 0;
            if (state) state.leaving = 0;
            resolve({ leaving, quietFor: performance.now() - (state?.changedAt ?? 0) });
          }, 0),
        ),
    )
    .catch(() => undefined);
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Watches a tab's requests and navigation so the agent waits for what an action started, and no longer: the page
 * is asked what it started, the network is followed from CDP's request events, and the DOM must be quiet.
 */
export function trackPageActivity(page: Page, now: () => number = Date.now): PageActivity {
  const inflight = new Map<HTTPRequest, number>();
  let lastActivity = 0;
  let navigating = false;
  let loadedAt = 0;

  const onRequest = (request: HTTPRequest) => {
    if (IGNORED_TYPES.has(request.resourceType())) return;
    inflight.set(request, now());
    lastActivity = now();
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) navigating = true;
  };
  const onDone = (request: HTTPRequest) => {
    if (inflight.delete(request)) lastActivity = now();
    // A navigation that failed, became a download or got "no content" leaves the document where it was.
    const status = request.response()?.status();
    if (request.isNavigationRequest() && (request.failure() || status === 204 || status === 205)) navigating = false;
  };
  const onLoaded = () => {
    navigating = false;
    lastActivity = loadedAt = now();
  };
  page.on("request", onRequest);
  page.on("requestfinished", onDone);
  page.on("requestfailed", onDone);
  page.on("domcontentloaded", onLoaded);

  return {
    async settle(options = {}, signal) {
      const { quietMs = 20, maxMs = 5_000 } = options;
      const start = now();
      const left = () => maxMs - (now() - start);
      const until = async (done: () => boolean, ms: number) => {
        const end = now() + ms;
        while (!done() && now() < end && !signal?.aborted) await sleep(5);
      };
      const navigationStarted = () =>
        until(() => navigating || loadedAt >= start, Math.min(NAVIGATION_START_MS, left()));
      // The first look follows the action at once: what it started is known before anything is waited for. No
      // look (undefined) means one is due: the last one is stale, or the document went away under it.
      let look = await probe(page, left());
      let idleSince: number | undefined;
      while (!signal?.aborted && left() > 0) {
        if (look?.leaving) {
          await navigationStarted();
          look = undefined;
        }
        // Requests stuck for longer than the bound are background traffic; forget them.
        for (const [request, since] of inflight) if (now() - since > maxMs) inflight.delete(request);
        if (navigating || inflight.size > 0 || now() - lastActivity < quietMs) {
          idleSince = undefined;
          look = undefined;
          await sleep(5);
          continue;
        }
        idleSince ??= now();
        look ??= await probe(page, left());
        if (!look) {
          await sleep(5);
          continue;
        }
        if (look.leaving) continue;
        if (look.quietFor >= quietMs || now() - idleSince >= DOM_QUIET_MAX_MS) return;
        await sleep(quietMs - look.quietFor);
        look = undefined;
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
