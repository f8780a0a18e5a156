import { Agent, get } from "node:http";
import autocannon from "autocannon";
import { percentile } from "./stats";

interface LoadOptions {
  url: string;
  key: string;
  paths: string[];
  connections: number;
  seconds: number;
  expected?: number;
  /** req/s on a fixed schedule (open loop) instead of as fast as answers come back. */
  rate?: number;
}

/**
 * Loads `paths` (in turn) on `url` for `seconds`: with autocannon as `connections` clients sending as fast as answers
 * come back, or with `rate` at that fixed pace (`pacedLoad`). Counts as unexpected every answer that is not `expected`
 * (default 200).
 */
export async function httpLoad(title: string, options: LoadOptions) {
  if (options.rate) return pacedLoad(title, { ...options, rate: options.rate });
  let i = 0;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
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

/**
 * Requests leave on a fixed schedule (`rate` per second, evenly spaced) whatever the answers do, over at most
 * `connections` kept-alive connections, and each latency counts from when its request was due, so time spent waiting
 * for a free connection counts too (no coordinated omission). autocannon's own rate limit does not do this: it sends
 * each second's budget as fast as it can and then waits, a burst that queues by itself.
 */
async function pacedLoad(title: string, options: LoadOptions & { rate: number }) {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const total = Math.round(options.rate * options.seconds);
  const latencies: number[] = [];
  const answers: Promise<void>[] = [];
  let unexpected = 0;
  const request = (path: string, dueAt: number) =>
    new Promise<void>((resolve) => {
      const req = get(`${options.url}${path}`, { agent, headers: { "X-Service-API-Key": options.key } }, (res) => {
        res.resume();
        res.on("end", () => {
          latencies.push(performance.now() - dueAt);
          if (res.statusCode !== (options.expected ?? 200)) unexpected++;
          resolve();
        });
      });
      req.on("error", () => {
        unexpected++;
        resolve();
      });
    });
  const start = performance.now();
  for (let sent = 0; sent < total; ) {
    const due = Math.min(total, Math.floor(((performance.now() - start) * options.rate) / 1000) + 1);
    for (; sent < due; sent++) {
      answers.push(request(options.paths[sent % options.paths.length], start + (sent * 1000) / options.rate));
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(answers);
  agent.destroy();
  return {
    title,
    "req/s": Math.round(total / ((performance.now() - start) / 1000)),
    "p50 ms": Math.round(percentile(latencies, 50)),
    "p99 ms": Math.round(percentile(latencies, 99)),
    "max ms": Math.round(Math.max(...latencies)),
    requests: total,
    "unexpected/errors": unexpected,
  };
}
