/**
 * What a service has set up and must undo, last first: each step is deferred right after the thing it undoes was
 * set up, so a start-up that fails half-way undoes exactly what it did, and `close` (once, however often called)
 * undoes everything. A failing step does not keep the later ones from running; the first failure is thrown at the end.
 */
export interface CleanupStack {
  defer(step: () => unknown): void;
  close(): Promise<void>;
}

export function createCleanupStack(): CleanupStack {
  const steps: Array<() => unknown> = [];
  let closing: Promise<void> | undefined;
  return {
    defer(step) {
      if (closing) throw new Error("defer after close: this would never be undone");
      steps.push(step);
    },
    close() {
      closing ??= (async () => {
        const failures: unknown[] = [];
        for (const step of steps.reverse()) {
          try {
            await step();
          } catch (err) {
            failures.push(err);
          }
        }
        if (failures.length > 0) throw failures[0];
      })();
      return closing;
    },
  };
}

/** Runs `start` with a fresh stack; if it fails, what it set up is undone before the error is passed on. */
export async function startWithCleanup<T>(start: (cleanup: CleanupStack) => Promise<T>): Promise<T> {
  const cleanup = createCleanupStack();
  try {
    return await start(cleanup);
  } catch (err) {
    await cleanup.close().catch(() => undefined);
    throw err;
  }
}
