import type { UsageMarks, UsageReport } from "./ports";
import { createUsageReporter } from "./usage-reporter";

test("a periodic report still queued when the stop begins does not bill past the browser's end", async () => {
  let clock = 10_000;
  let releaseFirst!: () => void;
  const firstRecordDone = new Promise<void>((resolve) => {
    releaseFirst = resolve;
  });
  const recorded: UsageReport[] = [];
  let records = 0;
  const reporter = createUsageReporter({
    store: {
      marks: async () => ({ browserMs: 0, proxyBytes: 0 }),
      async record(_id: string, _marks: UsageMarks, reports: readonly UsageReport[]) {
        // The first write is slow (a loaded database): the next tick's report waits behind it.
        if (records++ === 0) await firstRecordDone;
        recorded.push(...reports);
      },
      pending: async () => [],
      done: async () => undefined,
    },
    publish: async () => undefined,
    now: () => new Date(clock),
    newId: () => `usage-${records}-${recorded.length}-${Math.random()}`,
    log: { warn: () => undefined },
  });
  const startedAt = new Date(0);
  reporter.track(
    { id: "b", projectId: "p", sessionId: null, startedAt, proxyBytes: () => 0 },
    { browserMs: 0, proxyBytes: 0 },
  );

  const first = reporter.tick(); // reports up to 10 s, slowly
  clock = 20_000;
  const second = reporter.tick(); // queued behind the first
  reporter.pause("b"); // the stop begins; the browser ends at 20 s
  const finished = reporter.finish("b", new Date(20_000));
  clock = 30_000; // the queued tick would run now and bill up to 30 s
  releaseFirst();
  await Promise.all([first, second, finished]);

  const billedMs = recorded.reduce(
    (sum, r) => sum + ((r.payload as { browser?: { milliseconds: number } }).browser?.milliseconds ?? 0),
    0,
  );
  expect(billedMs).toBe(20_000);
  expect(recorded.at(-1)?.payload).toMatchObject({ lastReport: true });
});
