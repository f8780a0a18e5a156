import {
  checkChromiumRuns,
  checkSandboxTools,
  findChromium,
  findNatsServer,
  findPostgresBin,
} from "@bas/embedded-infra";
import type { StackConfig } from "./config";

/** The Node.js major the service is tested on (the current LTS) and needs: CI runs on it alone. */
export const NODE_MAJOR = 24;

/** What to install when this Node is older than the one the service is tested on; undefined when it is not. */
export function missingNode(nodeVersion: string = process.version): string | undefined {
  if (Number(/^v(\d+)/.exec(nodeVersion)?.[1]) >= NODE_MAJOR) return undefined;
  return (
    `Node.js ${NODE_MAJOR} or newer (this is ${nodeVersion}, which the service is not tested on): install Node.js ` +
    `${NODE_MAJOR}, the current LTS (https://nodejs.org/en/download), and start again with it`
  );
}

export interface Prerequisites {
  /** The Chromium browser-pool is to run (CHROMIUM_PATH, or one found in the usual places); unset with pods. */
  chromiumPath: string | undefined;
  /** One line per missing program, each saying how to install it; empty when nothing is missing. */
  missing: string[];
}

/**
 * Everything the stack needs from the machine, checked before anything starts, so that a newcomer learns at once
 * and in one go what to install, instead of from a stack that never turns healthy. Only Chromium is run, to ask its
 * version: a path that names another program is as broken as a missing one.
 */
export function checkPrerequisites(
  config: StackConfig,
  env: NodeJS.ProcessEnv = process.env,
  nodeVersion: string = process.version,
): Prerequisites {
  const missing: string[] = [];
  const node = missingNode(nodeVersion);
  if (node) missing.push(node);
  const attempt = <T>(find: () => T): T | undefined => {
    try {
      return find();
    } catch (err) {
      missing.push((err as Error).message);
      return undefined;
    }
  };
  if (!config.NATS_URL) attempt(findNatsServer);
  if (!config.DATABASE_URL) attempt(findPostgresBin);
  // With the Kubernetes or the container driver browsers run in pods or containers: nothing of theirs is needed here.
  if (env.BROWSER_DRIVER === "kubernetes" || env.BROWSER_DRIVER === "container") {
    return { chromiumPath: undefined, missing };
  }
  const chromiumPath = attempt(() => {
    const found = findChromium(config.CHROMIUM_PATH || undefined);
    checkChromiumRuns(found);
    return found;
  });
  attempt(checkSandboxTools);
  return { chromiumPath, missing };
}
