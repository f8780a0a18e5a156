import autocannon from "autocannon";

/**
 * Loads `paths` (in turn) on `url` with autocannon for `seconds`, as `connections` clients sending as fast as answers
 * come back, or at a fixed `rate` (req/s). Counts as unexpected every answer that is not `expected` (default 200).
 */
export async function httpLoad(
  title: string,
  options: {
    url: string;
    key: string;
    paths: string[];
    connections: number;
    seconds: number;
    expected?: number;
    rate?: number;
  },
) {
  let i = 0;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    ...(options.rate ? { overallRate: options.rate } : {}),
    headers: { "X-Service-API-Key": options.key },
    requests: [{ setupRequest: (req: any) => ({ ...req, path: options.paths[i++ % options.paths.length] }) }],
  });
  const good =
    (result.statusCodeStats as Record<string, { count: number }>)[String(options.expected ?? 200)]?.count ?? 0;
  return {
    title,
    "req/s": Math.round(result.requests.average),
    "p50 ms": result.latency.p50,
    "p99 ms": result.latency.p99,
    "max ms": result.latency.max,
    requests: result.requests.total,
    "unexpected/errors": result.requests.total - good + result.errors + result.timeouts,
  };
}
