export type CheckState = "ok" | "down" | "not configured";

export interface HealthReport {
  ok: boolean;
  checks: Record<string, CheckState>;
  /** Why a part is down, where it said (`browserPool` → "Chromium not found at ..."). */
  reasons: Record<string, string>;
}

export interface HealthDeps {
  /** Service name → gRPC address; undefined when the deployment did not configure it. */
  services: Record<string, string | undefined>;
  /** Whether the server at the address answers grpc.health.v1 SERVING. */
  checkService(address: string): Promise<boolean>;
  /**
   * For services whose job needs more than answering calls: asked once the service answers its health check,
   * resolves to why it cannot do its job (undefined when it can). The browser pool must be able to launch browsers.
   */
  capabilities?: Record<string, () => Promise<string | undefined>>;
  /** Named checks that throw when their part is down (event store writable, database reachable). */
  probes: Record<string, () => Promise<void>>;
}

type Check = [name: string, state: CheckState, reason?: string];

/**
 * The whole deployment is healthy only when every service answers its health check, can do its job, and the stores
 * accept work: an unconfigured service counts as down, because a request needing it would fail.
 */
export function createHealthCheck(deps: HealthDeps): () => Promise<HealthReport> {
  async function checkService(name: string, address: string | undefined): Promise<Check> {
    if (!address) return [name, "not configured"];
    if (!(await deps.checkService(address))) return [name, "down"];
    const capability = deps.capabilities?.[name];
    if (!capability) return [name, "ok"];
    try {
      const problem = await capability();
      return problem === undefined ? [name, "ok"] : [name, "down", problem];
    } catch {
      return [name, "down"];
    }
  }

  return async () => {
    const entries = await Promise.all([
      ...Object.entries(deps.services).map(([name, address]) => checkService(name, address)),
      ...Object.entries(deps.probes).map(async ([name, probe]): Promise<Check> => {
        try {
          await probe();
          return [name, "ok"];
        } catch {
          return [name, "down"];
        }
      }),
    ]);
    const checks = Object.fromEntries(entries.map(([name, state]) => [name, state]));
    const reasons = Object.fromEntries(
      entries.flatMap(([name, , reason]) => (reason === undefined ? [] : [[name, reason]])),
    );
    return { ok: entries.every(([, state]) => state === "ok"), checks, reasons };
  };
}

/** `"browserPool: down (Chromium not found at ...); billing: not configured"` for the parts that are not ok. */
export function describeProblems(report: HealthReport): string {
  return Object.entries(report.checks)
    .filter(([, state]) => state !== "ok")
    .map(([name, state]) => {
      const reason = report.reasons[name];
      return reason ? `${name}: ${state} (${reason})` : `${name}: ${state}`;
    })
    .join("; ");
}
