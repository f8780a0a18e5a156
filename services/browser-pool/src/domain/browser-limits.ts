import { AtCapacityError, LimitExceededError } from "@bas/errors";

export interface BrowserLimits {
  perProject: number;
  perNode: number;
}

/** Active browsers counted before taking one more. */
export interface BrowserCounts {
  project: number;
  node: number;
}

/**
 * Refuses one more browser when the project (across every node) or this node is at its maximum; only the second may
 * find room on another node.
 */
export function checkBrowserLimits(counts: BrowserCounts, limits: BrowserLimits): void {
  if (counts.project >= limits.perProject) {
    throw new LimitExceededError(
      `Too many concurrent active browsers for this project (maximum ${limits.perProject}). Stop a browser and try again.`,
    );
  }
  if (counts.node >= limits.perNode) {
    throw new AtCapacityError(`This browser node is at capacity (${limits.perNode} browsers). Try again shortly.`);
  }
}
