import type { CdpEndpoint, CdpEndpoints, Launched, ScreenRecording, UsageMarks } from "./ports";
import type { UsageReporter } from "./usage-reporter";
import { devtoolsSocketOf } from "../domain/events";

export interface LiveBrowserInit {
  id: string;
  projectId: string;
  sessionId: string | null;
  startedAt: Date;
  timeoutAt: Date;
  cdpSecret: string;
  cdpUrl: string;
  launched: Launched;
  /** Usage already reported for this browser (non-zero when a restart adopts it). */
  marks: UsageMarks;
  /** Set when the browser is recorded. */
  recording?: ScreenRecording;
  /** Set when the browser's downloads are kept. */
  downloads?: { close(): void };
  /** What callers' CDP waits for (see `CdpEndpointSpec.ready`). */
  ready?: Promise<unknown>;
  /** The profile the browser has open, saved when it stops. */
  profileId?: string | null;
}

export interface LiveBrowser extends LiveBrowserInit {
  endpoint: CdpEndpoint;
}

export interface LiveBrowsersDeps {
  cdp: CdpEndpoints;
  usage: UsageReporter;
  now(): Date;
  onTimeout(id: string): Promise<unknown>;
  onCrash(id: string, detail: string): void;
  /** How often timeouts are checked. */
  sweepMs?: number;
}

/**
 * The browsers this node runs for callers: each reachable through the CDP proxy, metered for usage, ended by its
 * timeout or noticed when it crashes. Detaching is synchronous, so once a stop is decided no new CDP client gets in.
 */
export function createLiveBrowsers(deps: LiveBrowsersDeps) {
  const live = new Map<string, LiveBrowser>();

  // One sweep for all timeouts (against the injected clock) rather than a timer each: cheap, and it also catches
  // browsers whose time ran out while this node was down.
  // A stop that failed is tried again on a later sweep.
  const sweep = setInterval(() => {
    const now = deps.now().getTime();
    for (const entry of live.values()) {
      if (entry.timeoutAt.getTime() <= now && !expired.has(entry.id)) {
        expired.add(entry.id);
        deps.onTimeout(entry.id).catch(() => expired.delete(entry.id));
      }
    }
  }, deps.sweepMs ?? 1_000);
  sweep.unref();
  const expired = new Set<string>();

  return {
    add(init: LiveBrowserInit): LiveBrowser {
      const endpoint = deps.cdp.register({
        browserId: init.id,
        secret: init.cdpSecret,
        ...devtoolsOf(init.launched),
        publicUrl: init.cdpUrl,
        ready: init.ready,
      });
      const entry = { ...init, endpoint };
      live.set(init.id, entry);
      const { networkProxy, metered } = init.launched;
      deps.usage.track(
        {
          id: init.id,
          projectId: init.projectId,
          sessionId: init.sessionId,
          startedAt: init.startedAt,
          proxyBytes: () => init.marks.proxyBytes + (metered ? networkProxy.bytes() : 0),
        },
        init.marks,
      );
      init.launched.running.onExit((detail) => {
        if (live.get(init.id) === entry) deps.onCrash(init.id, detail);
      });
      return entry;
    },
    get: (id: string): LiveBrowser | undefined => live.get(id),
    has: (id: string) => live.has(id),
    get size() {
      return live.size;
    },
    ids: () => [...live.keys()],
    countForProject(projectId: string): number {
      let n = 0;
      for (const b of live.values()) if (b.projectId === projectId) n++;
      return n;
    },
    /** Cuts the browser's CDP clients off and refuses new ones, keeping it otherwise as it is (a stop in progress). */
    suspend(id: string) {
      if (!live.has(id)) return;
      deps.cdp.unregister(id);
      deps.usage.pause(id);
    },
    /** Opens the CDP endpoint of a suspended browser again (its stop could not be recorded). */
    resume(id: string) {
      const entry = live.get(id);
      if (!entry) return;
      deps.usage.resume(id);
      entry.endpoint = deps.cdp.register({
        browserId: id,
        secret: entry.cdpSecret,
        ...devtoolsOf(entry.launched),
        publicUrl: entry.cdpUrl,
      });
    },
    /** Takes a browser out of service at once: its CDP clients are cut off and new ones refused. */
    detach(id: string): LiveBrowser | undefined {
      const entry = live.get(id);
      if (!entry) return undefined;
      live.delete(id);
      expired.delete(id);
      deps.cdp.unregister(id);
      return entry;
    },
    close() {
      clearInterval(sweep);
    },
    /** Ends a detached browser: the last usage report, then the processes and the proxy. */
    async retire(entry: LiveBrowser, finishedAt: Date): Promise<void> {
      entry.downloads?.close();
      // The proxy closes only after the last report has read its byte count.
      const usage = deps.usage.finish(entry.id, finishedAt).finally(() => entry.launched.dispose());
      await Promise.allSettled([entry.launched.running.kill(), usage]);
    },
  };
}

export type LiveBrowsers = ReturnType<typeof createLiveBrowsers>;

/**
 * Where the CDP proxy finds a browser's DevTools: a local browser only through its sandbox's socket, or its relay
 * into the sandbox for callers.
 */
function devtoolsOf({ running: { handle, cdpRelay } }: Launched) {
  return {
    devtoolsUrl: handle.devtoolsUrl,
    devtoolsSocket: devtoolsSocketOf(handle),
    relay: cdpRelay,
  };
}
