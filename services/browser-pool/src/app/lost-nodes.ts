import type { BrowserReadModel, NodeRegistry } from "./ports";
import { type RecoveryDeps, recordGone } from "./recovery";

export interface LostNodesDeps extends Pick<RecoveryDeps, "usage" | "pool" | "now"> {
  nodes: NodeRegistry;
  readModel: Pick<BrowserReadModel, "liveOnNode">;
  nodeId: string;
  /** How long a node may be silent before it counts as gone (NODE_LOST_AFTER_SECONDS). */
  lostAfterMs: number;
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void };
}

/**
 * A node that crashed for good, or was scaled away, leaves browsers that nobody can reach and that still count against
 * their projects' limits and sessions: only its own restart would end them. So every node says it is alive
 * (`beat`), and every node looks for nodes silent for `lostAfterMs` that still have browsers, and records those
 * browsers stopped as a restart of their node would (`crash`). Should the node come back after all, its restart finds
 * them stopped and ends whatever of them still runs. Beats and looks come often enough, whatever `lostAfterMs` is,
 * that a live node is never taken for gone.
 */
export async function watchNodes(deps: LostNodesDeps): Promise<{ stop(): void }> {
  const { nodes, nodeId, lostAfterMs, log } = deps;
  const beat = () => nodes.beat(nodeId).catch((err) => log.warn({ err }, "could not record that this node is alive"));

  async function sweep(): Promise<void> {
    for (const lost of await nodes.lostWithBrowsers(lostAfterMs)) {
      if (lost === nodeId) continue;
      const rows = await deps.readModel.liveOnNode(lost);
      const detail = `its browser-pool node ${lost} was not heard from for ${Math.round(lostAfterMs / 1000)} s`;
      for (const row of rows) await recordGone(deps, row, detail);
      log.info({ node: lost, browsers: rows.length }, "browsers of a lost node recorded stopped");
    }
  }

  const timers = [
    setInterval(beat, Math.min(10_000, lostAfterMs / 6)),
    setInterval(
      () => {
        sweep().catch((err) => log.warn({ err }, "the look for lost nodes failed"));
      },
      Math.min(30_000, lostAfterMs / 2),
    ),
  ];
  for (const timer of timers) timer.unref();
  await beat();
  return {
    stop: () => {
      for (const timer of timers) clearInterval(timer);
    },
  };
}
