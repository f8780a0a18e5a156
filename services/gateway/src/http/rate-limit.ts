import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { HttpError } from "./http-error";

export interface RateLimitOptions {
  /** Requests a project may make per window; 0 turns the limit off. */
  requests: number;
  windowSeconds: number;
}

export interface ProjectRateLimit {
  /** Counts one request of the project; throws a 429 (with `Retry-After`) when its window is used up. */
  admit(projectId: string): Promise<void>;
}

/**
 * Requests per project and window, counted in this gateway's memory: with N replicas behind a load balancer a project
 * gets up to N times the limit, so set it per replica. Memory-only on purpose: a shared store would put a round trip
 * on every request, and the per-project session and browser limits (enforced by their services) are exact anyway.
 */
export function createProjectRateLimit(options: RateLimitOptions): ProjectRateLimit {
  if (options.requests <= 0) return { admit: async () => {} };
  const limiter = new RateLimiterMemory({ points: options.requests, duration: options.windowSeconds });
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
