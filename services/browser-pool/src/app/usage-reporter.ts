import { billing } from "@bas/proto";
import type { PublishUsage, UsageMarks, UsageReport, UsageStore } from "./ports";

/** A running browser as billing sees it. */
export interface UsageSource {
  id: string;
  projectId: string;
  sessionId: string | null;
  startedAt: Date;
  /** Network proxy bytes, cumulative over the browser's whole life (across restarts of this service). */
  proxyBytes(): number;
}

export interface UsageReporterDeps {
  store: UsageStore;
  publish: PublishUsage;
  now(): Date;
  newId(): string;
  log: { warn(o: object, msg: string): void };
}

function usageReport(id: string, kind: "browser" | "proxy", fact: Partial<billing.UsageRecorded>): UsageReport {
  return { id, kind, payload: billing.UsageRecorded.toJSON(billing.UsageRecorded.fromPartial({ ...fact, id })) };
}

/**
 * Turns browser time and proxy bytes into UsageRecorded facts for billing: periodically for every running browser
 * and once more when it stops. Only what was not reported yet is reported (cumulative marks per browser).
 */
export function createUsageReporter(deps: UsageReporterDeps) {
  const tracked = new Map<
    string,
    { source: UsageSource; marks: UsageMarks; chain: Promise<void>; stopping?: boolean }
  >();
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  /**
   * What is left to report of `source` up to `until`. The last report (`last`) always has a browser fact, even of
   * 0 ms, marked `lastReport`, and it comes after the proxy fact: once billing has charged it, it has charged all of
   * the browser, and readers of costs can tell (a session's costs are final when its status turns terminal).
   */
  function reportsFor(source: UsageSource, marks: UsageMarks, until: Date, last = false) {
    const next: UsageMarks = {
      browserMs: Math.max(marks.browserMs, until.getTime() - source.startedAt.getTime()),
      proxyBytes: Math.max(marks.proxyBytes, source.proxyBytes()),
    };
    const base = {
      projectId: source.projectId,
      sessionId: source.sessionId ?? undefined,
      browserId: source.id,
      occurredAt: until,
    };
    const reports: UsageReport[] = [];
    const add = (kind: "browser" | "proxy", quantity: Partial<billing.UsageRecorded>) =>
      reports.push(usageReport(deps.newId(), kind, { ...base, ...quantity }));
    if (next.proxyBytes > marks.proxyBytes) add("proxy", { proxy: { bytes: next.proxyBytes - marks.proxyBytes } });
    if (next.browserMs > marks.browserMs || last) {
      add("browser", {
        browser: { milliseconds: next.browserMs - marks.browserMs },
        ...(last ? { lastReport: true } : {}),
      });
    }
    return { next, reports };
  }

  /** Reports one browser up to `until`; calls for the same browser run one after another. */
  function report(id: string, until?: Date, last = false): Promise<void> {
    const entry = tracked.get(id);
    if (!entry) return Promise.resolve();
    const run = entry.chain.then(async () => {
      // A periodic report queued before the stop began must not run after it: it would bill up to now, past the
      // browser's end, and the last report (up to the end) could not take that back.
      if (entry.stopping && !last) return;
      const { next, reports } = reportsFor(entry.source, entry.marks, until ?? deps.now(), last);
      if (reports.length === 0) return;
      await deps.store.record(id, next, reports);
      entry.marks = next;
      await flush();
    });
    entry.chain = run.catch((err) => deps.log.warn({ err, browserId: id }, "usage report failed; retried next time"));
    return entry.chain;
  }

  /** Publishes what the outbox holds (also reports a crash left behind); what fails stays for the next round. */
  async function publishPending(): Promise<void> {
    for (;;) {
      const pending = await deps.store.pending(100);
      if (pending.length === 0) return;
      const published: string[] = [];
      for (const r of pending) {
        try {
          await deps.publish(r);
          published.push(r.id);
        } catch (err) {
          deps.log.warn({ err, usageId: r.id }, "usage publish failed; kept in the outbox");
          break;
        }
      }
      await deps.store.done(published);
      if (published.length < pending.length) return;
    }
  }

  /** One flush at a time, each seeing every report recorded before it was asked for. */
  function flush(): Promise<void> {
    flushing = flushing.then(publishPending, publishPending);
    return flushing;
  }

  return {
    track(source: UsageSource, marks: UsageMarks) {
      tracked.set(source.id, { source, marks, chain: Promise.resolve() });
    },
    /** A stop of the browser is being decided: no periodic report until it is stopped (`finish`) or not (`resume`). */
    pause(id: string) {
      const entry = tracked.get(id);
      if (entry) entry.stopping = true;
    },
    resume(id: string) {
      const entry = tracked.get(id);
      if (entry) entry.stopping = false;
    },
    /** The last report of a stopped browser, up to when it stopped; then it is forgotten. */
    async finish(id: string, finishedAt: Date) {
      await report(id, finishedAt, true);
      tracked.delete(id);
    },
    /**
     * The last report of a browser found dead at a restart: when it died is unknown, so no more time is billed, but
     * billing still learns that the browser's cost is complete.
     */
    async finishUntracked(browser: { id: string; projectId: string; sessionId: string | null }, at: Date) {
      const marks = await deps.store.marks(browser.id);
      const last = usageReport(deps.newId(), "browser", {
        projectId: browser.projectId,
        sessionId: browser.sessionId ?? undefined,
        browserId: browser.id,
        occurredAt: at,
        browser: { milliseconds: 0 },
        lastReport: true,
      });
      await deps.store.record(browser.id, marks, [last]);
      await flush();
    },
    forget(id: string) {
      tracked.delete(id);
    },
    // A browser being stopped is reported once more, up to its recorded end: a tick now would bill past it.
    tick: () => Promise.all([...tracked].filter(([, e]) => !e.stopping).map(([id]) => report(id))).then(() => flush()),
    flush,
    start(intervalMs: number) {
      timer = setInterval(() => void this.tick().catch(() => undefined), intervalMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await Promise.all([...tracked.values()].map((e) => e.chain));
      await flush().catch(() => undefined);
    },
  };
}

export type UsageReporter = ReturnType<typeof createUsageReporter>;
