import type { Pool } from "pg";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import { HttpError } from "./http-error";

export interface RateLimitOptions {
  /** Requests a project may make per window; 0 turns the limit off. */
  requests: number;
  windowSeconds: number;
  /**
   * Where the counts are kept, shared by every gateway replica on the database, so a project gets its limit once and
   * not once per replica. While Postgres cannot be reached, each replica counts in its own memory instead.
   */
  pool: Pool;
  /** Keeps the counts of namespaces sharing a database apart. */
  namespace: string;
}

export interface ProjectRateLimit {
  /** Counts one request of the project; throws a 429 (with `Retry-After`) when its window is used up. */
  admit(projectId: string): Promise<void>;
}

export function createProjectRateLimit(options: RateLimitOptions): ProjectRateLimit {
  if (options.requests <= 0) return { admit: async () => {} };
  const limits = { points: options.requests, duration: options.windowSeconds, keyPrefix: options.namespace };
  const limiter = new RateLimiterPostgres({
    ...limits,
    storeClient: options.pool,
    tableName: "gateway_rate_limits",
    // The gateway's migrations made it.
    tableCreated: true,
    insuranceLimiter: new RateLimiterMemory(limits),
  });
  const described = `${options.requests} requests per ${options.windowSeconds} s`;
  return {
    async admit(projectId) {
      try {
        await limiter.consume(projectId);
      } catch (refusal) {
        if (!(refusal instanceof RateLimiterRes)) throw refusal;
        const retryAfter = Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
        throw new HttpError(429, `Rate limit exceeded (${described} per project); retry after ${retryAfter} s`, {
          "Retry-After": String(retryAfter),
        });
      }
    },
  };
}
