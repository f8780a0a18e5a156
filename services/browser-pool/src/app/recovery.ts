import type { BrowserDriver } from "../domain/browser-driver";
import type { BrowserReadModel, BrowserRecord, Launcher } from "./ports";
import type { BrowserPool } from "./browser-pool";
import type { UsageReporter } from "./usage-reporter";

export interface RecoveryDeps {
  readModel: Pick<BrowserReadModel, "liveOnNode">;
  nodeId: string;
  driver: BrowserDriver;
  launcher: Launcher;
  pool: BrowserPool;
  usage: Pick<UsageReporter, "finishUntracked">;
  now(): Date;
  log: { info(o: object, msg: string): void };
}

/**
 * At start, before anything new launches: every browser the read model says this node runs is either adopted
 * (still alive and answering CDP, and not behind a custom proxy whose credentials are gone) or recorded as stopped
 * (`crash`); then whatever this node's driver still finds
 * running that nobody owns (idle warm browsers of the last run, a launch cut short) is ended.
 * The read model must have caught up with the event stream first.
 */
export async function recoverBrowsers(
  deps: RecoveryDeps,
): Promise<{ adopted: number; stopped: number; reaped: number }> {
  const rows = await deps.readModel.liveOnNode(deps.nodeId);
  const keep = new Set<string>();
  for (const row of rows) {
    // A custom proxy's credentials were held in memory only: the browser cannot go on through that proxy, and must
    // not go out any other way.
    const lostProxy = row.settings.customProxy?.authenticated === true;
    if (row.status === "active" && row.handle && !lostProxy) {
      const launched = await deps.launcher.adopt(row.id, row.handle, row.settings);
      if (launched) {
        await deps.pool.adopt(row, launched);
        keep.add(row.id);
        continue;
      }
    }
    const detail = lostProxy
      ? "browser-pool restarted, and the credentials of the browser's custom proxy are not kept across a restart"
      : "the browser was gone when browser-pool restarted";
    await recordGone(deps, row, detail);
  }
  const reaped = await deps.driver.reapOrphans(keep);
  const result = { adopted: keep.size, stopped: rows.length - keep.size, reaped: reaped.length };
  deps.log.info(result, "browsers of the previous run recovered");
  return result;
}

/**
 * Records a browser that is gone (`crash`, with why). Its last usage report comes first (a crash right after the stop
 * must not lose it; a repeat costs nothing): no more time is billed, but billing learns that its cost is complete.
 */
export async function recordGone(
  deps: Pick<RecoveryDeps, "usage" | "pool" | "now">,
  row: BrowserRecord,
  detail: string,
): Promise<void> {
  await deps.usage.finishUntracked({ id: row.id, projectId: row.projectId, sessionId: row.sessionId }, deps.now());
  await deps.pool.stop(row.id, { reason: "crash", detail });
}
