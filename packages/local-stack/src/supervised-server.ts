import { setTimeout as sleep } from "node:timers/promises";
import type { ServerProcess } from "@bas/embedded-infra";
import { backoffDelay } from "@bas/service-kit/retry";

export interface SupervisedServer<S extends ServerProcess> {
  /** The server running now (after a restart, the new one). */
  current(): S;
  /** No more restarts; stops the server (waiting for a restart under way to finish first). */
  stop(): Promise<void>;
}

const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split("\n")[0];

/**
 * Keeps an infrastructure server (NATS, Postgres) up for as long as the stack runs, as the services are: when it
 * dies it is started again, with backoff, by `start`, which reuses its data dir and port, so the services (which
 * reconnect) carry on. The first start is the caller's: its failure (a missing program) is thrown, not retried.
 */
export async function superviseServer<S extends ServerProcess>(options: {
  name: string;
  start(): Promise<S>;
  onEvent(message: string): void;
}): Promise<SupervisedServer<S>> {
  let server = await options.start();
  let stopping = false;
  let restarting: Promise<unknown> = Promise.resolve();
  const wake = new AbortController();

  async function keepRunning(): Promise<void> {
    let restarts = 0;
    for (;;) {
      const startedAt = Date.now();
      let how = await server.exited;
      if (stopping) return;
      // A server that ran for a while gets a fresh restart budget.
      if (Date.now() - startedAt > 60_000) restarts = 0;
      for (;;) {
        const delay = backoffDelay(++restarts, { maxMs: 10_000 });
        options.onEvent(`${options.name} exited (${how}); restarting in ${delay} ms`);
        await sleep(delay, undefined, { signal: wake.signal }).catch(() => undefined);
        if (stopping) return;
        // `stop()` waits for this, then stops whatever it started.
        const attempt = options.start().then((started) => {
          server = started;
        });
        restarting = attempt.catch(() => undefined);
        try {
          await attempt;
          options.onEvent(`${options.name} is back`);
          break;
        } catch (err) {
          // Postgres refuses to start while backends of the killed postmaster still hold its shared memory, for one.
          how = `start failed: ${firstLine(err)}`;
        }
      }
      if (stopping) return;
    }
  }
  void keepRunning();

  return {
    current: () => server,
    async stop() {
      stopping = true;
      wake.abort();
      await restarting;
      await server.stop();
    },
  };
}
