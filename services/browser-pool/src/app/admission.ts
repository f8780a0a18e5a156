import { LimitExceededError } from "@bas/errors";
import { type BrowserLimits, checkBrowserLimits } from "../domain/browser-limits";
import { createKeyedLock } from "./keyed-lock";
import type { ProjectAdmissions } from "./ports";

export interface AdmissionDeps {
  limits: BrowserLimits;
  /** The project's browsers on other nodes, admitted there or recorded. */
  elsewhere: Pick<ProjectAdmissions, "admit" | "countElsewhere">;
  /** This node's running browsers. */
  local: { countForProject(projectId: string): number; readonly size: number };
  /** Waits until what the counts read shows every stop recorded so far. */
  lookAgain(): Promise<void>;
}

/**
 * Counts a browser in against the project's and the node's maximum before it launches. This node's launches in flight
 * count too, and a project's admissions here take turns, so concurrent requests here cannot both slip in; the other
 * nodes' browsers count through `elsewhere`, under a lock every node takes, so a burst spread over the replicas cannot
 * either.
 */
export function createAdmission(deps: AdmissionDeps) {
  const pending = new Map<string, number>();
  let pendingTotal = 0;
  const inTurn = createKeyedLock();

  async function take(projectId: string, browserId: string): Promise<() => void> {
    const mine = pending.get(projectId) ?? 0;
    const here = deps.local.countForProject(projectId) + mine;
    checkBrowserLimits({ project: here, node: deps.local.size + pendingTotal }, deps.limits);
    pending.set(projectId, mine + 1);
    pendingTotal += 1;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      const left = (pending.get(projectId) ?? 1) - 1;
      if (left > 0) pending.set(projectId, left);
      else pending.delete(projectId);
      pendingTotal -= 1;
    };
    try {
      const limit = deps.limits.perProject;
      const elsewhere = await deps.elsewhere.admit({ projectId, browserId, here: here + 1, limit });
      checkBrowserLimits({ project: elsewhere + here, node: 0 }, deps.limits);
    } catch (err) {
      release();
      throw err;
    }
    return release;
  }

  return {
    /**
     * The project's browsers (launching or running, every node) against its maximum, taking nothing; throws
     * LimitExceededError, saying what a caller creating a session can do, when there is no room for one more.
     */
    async capacity(projectId: string): Promise<{ active: number; limit: number }> {
      const count = async () =>
        (await deps.elsewhere.countElsewhere(projectId)) +
        deps.local.countForProject(projectId) +
        (pending.get(projectId) ?? 0);
      const limit = deps.limits.perProject;
      let active = await count();
      // As for a create: a browser stopped a moment ago may still count.
      if (active >= limit) {
        await deps.lookAgain();
        active = await count();
      }
      if (active >= limit) {
        throw new LimitExceededError(
          `Too many concurrent active browsers for this project (maximum ${limit}): a new session would get none. Stop a browser or a session and try again.`,
        );
      }
      return { active, limit };
    },
    /**
     * Takes a place for `browserId`, or throws LimitExceededError (the project's maximum) or AtCapacityError (this
     * node's); the returned function gives the place on this node back (once; later calls do nothing). Give it back in
     * the same synchronous step the browser joins `local`, so it never counts twice.
     */
    async admit(projectId: string, browserId: string): Promise<() => void> {
      // One at a time per project on this node: each counts the admissions before it here as they were decided.
      return inTurn(projectId, async () => {
        try {
          return await take(projectId, browserId);
        } catch (err) {
          if (!(err instanceof LimitExceededError)) throw err;
          // A browser stopped a moment ago may still count: the stop is answered before the read model and the node
          // running it know. Look again once they do.
          await deps.lookAgain();
          return take(projectId, browserId);
        }
      });
    },
  };
}
