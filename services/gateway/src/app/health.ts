export type CheckState = "ok" | "down" | "not configured";

export interface HealthReport {
  ok: boolean;
  checks: Record<string, CheckState>;
}

export interface HealthDeps {
  /** Service name → gRPC address; undefined when the deployment did not configure it. */
  services: Record<string, string | undefined>;
  /** Whether the server at the address answers grpc.health.v1 SERVING. */
  checkService(address: string): Promise<boolean>;
  /** Named checks that throw when their part is down (event store writable, database reachable). */
  probes: Record<string, () => Promise<void>>;
}

/**
 * The whole deployment is healthy only when every service answers its health check and the stores accept work:
 * an unconfigured service counts as down, because a request needing it would fail.
 */
export function createHealthCheck(deps: HealthDeps): () => Promise<HealthReport> {
  return async () => {
    const entries = await Promise.all([
      ...Object.entries(deps.services).map(async ([name, address]): Promise<[string, CheckState]> => {
        if (!address) return [name, "not configured"];
        return [name, (await deps.checkService(address)) ? "ok" : "down"];
      }),
      ...Object.entries(deps.probes).map(async ([name, probe]): Promise<[string, CheckState]> => {
        try {
          await probe();
          return [name, "ok"];
        } catch {
          return [name, "down"];
        }
      }),
    ]);
    const checks = Object.fromEntries(entries);
    return { ok: entries.every(([, state]) => state === "ok"), checks };
  };
}

/** `"runner: down; billing: not configured"` for the parts that are not ok. */
export function describeProblems(report: HealthReport): string {
  return Object.entries(report.checks)
    .filter(([, state]) => state !== "ok")
    .map(([name, state]) => `${name}: ${state}`)
    .join("; ");
}
