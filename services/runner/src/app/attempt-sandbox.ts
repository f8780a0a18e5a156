import type { Attempt, TaskDisposition } from "./attempt";
import { ignoreStale } from "./attempt-reports";
import type { BrowserDriver } from "./browser-driver";
import { browserSettingsFor } from "./browser-settings";
import { BrowserConnectError } from "./browser-errors";
import type { AcquiredBrowser, TaskLease } from "./task-worker";

export interface OpenBrowser {
  acquired: AcquiredBrowser;
  browser: BrowserDriver;
}

/** What an attempt holds and must let go of when it ends, whichever way it ends. */
export interface Held {
  lease?: TaskLease;
  /** The browser the attempt works in now; a reconnect may replace it. */
  browser?: OpenBrowser;
}

/** Lets go of what the attempt held once it ended with `disposition` (none when it threw). */
export async function letGo(held: Held, disposition: TaskDisposition | undefined): Promise<void> {
  await held.browser?.browser.disconnect().catch(() => undefined);
  // The lease outlives an attempt that hands the task on: it says what that attempt was doing.
  if (disposition?.kind === "ack") await held.lease?.release().catch(() => undefined);
}

/** The session's browser, connected; waits while browser-pool (or the browser's CDP endpoint) is away. */
export async function openBrowser(t: Attempt): Promise<OpenBrowser> {
  const settings = await browserSettingsFor(t.assignment, t.deps.reports);
  return t.waitOut("browser-pool", async () => {
    const acquired = await t.deps.acquireBrowser(t.assignment, settings);
    try {
      return { acquired, browser: await t.deps.connectBrowser(acquired.cdpUrl) };
    } catch (err) {
      throw new BrowserConnectError(`could not connect to browser ${acquired.browserId}`, { cause: err });
    }
  });
}

/**
 * Claims the task's lease and the session's browser, then tells the sessions service the sandbox is ready. A browser
 * that cannot be had hands the task back while attempts remain, and fails the sandbox after the last one. Returns
 * the disposition when the attempt ends here.
 */
export async function acquireSandbox(t: Attempt, held: Held): Promise<TaskDisposition | undefined> {
  const { assignment: a, deps } = t;
  // Any failure to claim is NATS not answering (the KV bucket exists once the runner started).
  held.lease = await t.waitOut(
    "NATS",
    () => deps.claimLease(a.taskId, t.attempt),
    () => true,
  );
  try {
    held.browser = await openBrowser(t);
  } catch (err) {
    if (t.attempt < deps.maxAttempts && !t.interrupted()) {
      deps.log.warn({ ...t.ids, err }, "could not get the session's browser; handing the task back");
      return { kind: "nak", delayMs: 2_000 };
    }
    await ignoreStale(
      deps.reports.sandboxFailed({
        sessionId: a.sessionId,
        error: `The browser could not be started: ${(err as Error).message}`,
      }),
    );
    return { kind: "ack" };
  }
  const { acquired } = held.browser;
  await deps.reports.sandboxReady({
    sessionId: a.sessionId,
    browserId: acquired.browserId,
    ...(acquired.liveUrl ? { liveUrl: acquired.liveUrl } : {}),
  });
  return undefined;
}
