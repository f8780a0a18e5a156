import { LimitExceededError } from "@bas/errors";
import { type BrowserLimits, checkBrowserLimits } from "../domain/browser-limits";

export interface AdmissionDeps {
  limits: BrowserLimits;
  /** Browsers of the project launching or running on other nodes. */
  countElsewhere(projectId: string): Promise<number>;
  /** This node's running browsers. */
  local: { countForProject(projectId: string): number; readonly size: number };
}

/**
 * Counts a browser in against the project's and the node's maximum before it launches. Launches in flight count
 * too, and the check and the count happen in one synchronous step, so concurrent requests cannot both slip in.
 */
export function createAdmission(deps: AdmissionDeps) {
  const pending = new Map<string, number>();
  let pendingTotal = 0;
  async function projectCount(projectId: string): Promise<number> {
    const elsewhere = await deps.countElsewhere(projectId);
    return elsewhere + deps.local.countForProject(projectId) + (pending.get(projectId) ?? 0);
  }
  return {
    /**
     * The project's browsers (launching or running, every node) against its maximum, taking nothing; throws
     * LimitExceededError, saying what a caller creating a session can do, when there is no room for one more.
     */
    async capacity(projectId: string): Promise<{ active: number; limit: number }> {
      const active = await projectCount(projectId);
      const limit = deps.limits.perProject;
      if (active >= limit) {
        throw new LimitExceededError(
          `Too many concurrent active browsers for this project (maximum ${limit}): a new session would get none. Stop a browser or a session and try again.`,
        );
      }
      return { active, limit };
    },
    /**
     * Takes a slot, or throws LimitExceededError (the project's maximum) or AtCapacityError (this node's); the returned function gives the slot back (once; later calls do
     * nothing). Give it back in the same synchronous step the browser joins `local`, so it never counts twice.
     */
    async admit(projectId: string): Promise<() => void> {
      const elsewhere = await deps.countElsewhere(projectId);
      const mine = pending.get(projectId) ?? 0;
      checkBrowserLimits(
        {
          project: elsewhere + deps.local.countForProject(projectId) + mine,
          node: deps.local.size + pendingTotal,
        },
        deps.limits,
      );
      pending.set(projectId, mine + 1);
      pendingTotal += 1;
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        const left = (pending.get(projectId) ?? 1) - 1;
        if (left > 0) pending.set(projectId, left);
        else pending.delete(projectId);
        pendingTotal -= 1;
      };
    },
  };
}
