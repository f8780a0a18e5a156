export interface HealthMonitorDeps {
  /** What the service needs to answer, each a round trip that throws when it fails (a query, a NATS flush). */
  probes: Record<string, () => Promise<unknown>>;
  /** Publishes the verdict (the gRPC health status the gateway's `/healthz` asks for). */
  setServing(serving: boolean): void;
  intervalMs: number;
  /** A probe slower than this counts as failed: a service that answers that slowly cannot answer its callers. */
  timeoutMs: number;
  log: { warn(o: object, msg: string): void; info(o: object, msg: string): void };
}

export interface HealthMonitor {
  /** Runs the probes now and publishes the verdict. */
  check(): Promise<boolean>;
  stop(): Promise<void>;
}

async function probeWithin(probe: () => Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Keeps the service's health status true to whether it can answer: every `intervalMs` each probe makes a real round
 * trip with a deadline (a drained connection pool or a database that refuses connections fails it), and the status
 * follows. A status set once at start would say SERVING while every call fails.
 */
export function startHealthMonitor(deps: HealthMonitorDeps): HealthMonitor {
  let serving: boolean | undefined;
  let running: Promise<boolean> | undefined;
  let stopped = false;

  async function runProbes(): Promise<boolean> {
    const failed: Record<string, string> = {};
    await Promise.all(
      Object.entries(deps.probes).map(async ([name, probe]) => {
        try {
          await probeWithin(probe, deps.timeoutMs);
        } catch (err) {
          failed[name] = (err as Error).message;
        }
      }),
    );
    const ok = Object.keys(failed).length === 0;
    if (stopped) return ok;
    if (ok !== serving) {
      if (ok) deps.log.info({}, "health: serving");
      else deps.log.warn({ failed }, "health: not serving, a dependency does not answer");
    }
    serving = ok;
    deps.setServing(ok);
    return ok;
  }

  const check = () => {
    running ??= runProbes().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => void check(), deps.intervalMs);
  timer.unref();

  return {
    check,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
