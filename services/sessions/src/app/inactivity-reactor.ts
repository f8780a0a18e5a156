import { setTimeout as sleep } from "node:timers/promises";
import type { SessionQueries } from "./ports";
import type { SessionCommands } from "./session-commands";

export interface InactivityReactorDeps {
  queries: SessionQueries;
  commands: SessionCommands;
  timeoutMs: number;
  now: () => Date;
  log?: { error(o: object, msg: string): void };
}

/**
 * Times out created and idle sessions that saw no change for the configured time. The read model only nominates
 * candidates; the decider checks the aggregate's own clock again, so replicas sweeping at once are harmless.
 */
export function startInactivityReactor(deps: InactivityReactorDeps): { stop(): Promise<void> } {
  const interval = Math.min(30_000, Math.max(50, Math.floor(deps.timeoutMs / 4)));
  const abort = new AbortController();

  async function sweep() {
    const before = new Date(deps.now().getTime() - deps.timeoutMs);
    for (const sessionId of await deps.queries.inactive(before, 100)) {
      if (abort.signal.aborted) return;
      await deps.commands.execute(sessionId, { type: "TimeOut", timeoutMs: deps.timeoutMs });
    }
  }

  const loop = (async () => {
    while (!abort.signal.aborted) {
      try {
        await sweep();
      } catch (err) {
        if (!abort.signal.aborted) deps.log?.error({ err }, "inactivity sweep failed");
      }
      await sleep(interval, undefined, { signal: abort.signal }).catch(() => undefined);
    }
  })();

  return {
    async stop() {
      abort.abort();
      await loop;
    },
  };
}
