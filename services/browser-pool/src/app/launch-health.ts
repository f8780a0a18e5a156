import { InvalidArgumentError } from "@bas/errors";
import type { Launched, Launcher } from "./ports";

/** Whether this node can launch a browser now, and if not, why and what to do about it. */
export interface LaunchHealthReport {
  canLaunch: boolean;
  /** Empty when it can. */
  problem: string;
  /** Idle browsers in the warm pool, and how many it keeps. */
  warmIdle: number;
  warmSize: number;
}

export interface LaunchHealthDeps {
  /**
   * Throws, saying what is missing and how to install it, when no launch can work (the browser program is not
   * there). Must be cheap: it runs on every health question. Absent for drivers that cannot tell in advance.
   */
  preflight?: () => void;
  /** The warm pool's state, reported as is. */
  warm: () => { idle: number; size: number };
  /** This many failed launches in a row, with none succeeding since, mean the node cannot launch. Default 3. */
  failuresBeforeDown?: number;
}

/** One line of a launch error, short enough for a health answer (Chromium's own output can be kilobytes). */
function firstLine(err: unknown): string {
  const line = (err instanceof Error ? err.message : String(err)).split("\n")[0].trim();
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

/**
 * Health that covers what the pool is for: launching browsers. A service that answers gRPC while every launch fails
 * (Chromium missing or broken) is not healthy. Answered from what the node already knows, the preflight check and
 * how the last launches went, so a health probe never launches a browser.
 */
export function createLaunchHealth(deps: LaunchHealthDeps) {
  const threshold = deps.failuresBeforeDown ?? 3;
  let failuresInARow = 0;
  let lastFailure = "";

  function report(): LaunchHealthReport {
    const { idle, size } = deps.warm();
    const verdict = (problem: string) => ({ canLaunch: problem === "", problem, warmIdle: idle, warmSize: size });
    try {
      deps.preflight?.();
    } catch (err) {
      return verdict(firstLine(err));
    }
    if (failuresInARow >= threshold) {
      return verdict(`the last ${failuresInARow} browser launches failed, the last with: ${lastFailure}`);
    }
    return verdict("");
  }

  return {
    report,
    /** The same launcher, with the outcome of every launch recorded. */
    watch(launcher: Launcher): Launcher {
      async function recorded(launching: Promise<Launched>): Promise<Launched> {
        try {
          const launched = await launching;
          failuresInARow = 0;
          return launched;
        } catch (err) {
          // A caller's mistake (a custom proxy the egress policy refuses) says nothing about launching.
          if (err instanceof InvalidArgumentError) throw err;
          failuresInARow += 1;
          lastFailure = firstLine(err);
          throw err;
        }
      }
      return {
        ...launcher,
        launch: (id, settings, extras) => recorded(launcher.launch(id, settings, extras)),
        launchWarm: (id, window) => recorded(launcher.launchWarm(id, window)),
      };
    },
  };
}

export type LaunchHealth = ReturnType<typeof createLaunchHealth>;
