import { loadBillingConfig } from "@bas/billing/src/config";
import { loadBrowserPoolConfig } from "@bas/browser-pool/src/config";
import { loadGatewayConfig } from "@bas/gateway/src/config";
import { loadRunnerConfig } from "@bas/runner/src/config";
import { loadSessionsConfig } from "@bas/sessions/src/config";

const LOADERS: Record<string, (env: NodeJS.ProcessEnv) => unknown> = {
  gateway: loadGatewayConfig,
  sessions: loadSessionsConfig,
  "browser-pool": loadBrowserPoolConfig,
  runner: loadRunnerConfig,
  billing: loadBillingConfig,
};

/**
 * Reads each service's configuration from the environment the launcher is about to give it, before anything
 * starts: a bad variable is reported at once, in the terminal, for every service it breaks, instead of five
 * services failing over and over with the reason in their log files.
 */
export function checkServiceEnvs(envs: Record<string, NodeJS.ProcessEnv>): string[] {
  const problems: string[] = [];
  for (const [name, env] of Object.entries(envs)) {
    try {
      LOADERS[name]?.(env);
    } catch (err) {
      // "invalid configuration:\n  VAR: why" → one "service: VAR: why" per variable
      const lines = (err as Error).message
        .split("\n")
        .slice(1)
        .map((line) => line.trim());
      problems.push(...(lines.length > 0 ? lines : [(err as Error).message]).map((line) => `${name}: ${line}`));
    }
  }
  return problems;
}
