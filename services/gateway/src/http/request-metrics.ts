import type { Middleware } from "koa";

/** Where the gateway reports each answered request (Prometheus in production). */
export interface HttpMetrics {
  requestAnswered(request: { method: string; route: string; status: number; seconds: number }): void;
}

/** The route of a request no route matched (a 404 or 405): one label for all of them, whatever the path was. */
export const UNMATCHED_ROUTE = "unmatched";

/**
 * Times every request until it is answered; a streamed body (SSE, a blob) counts until it starts. Labelled with the
 * route as declared (`/api/v3/sessions/{id}`, set by the router), never the raw path, so that ids do not become
 * series. Runs first, so the status it sees is the one the error middleware chose.
 */
export function requestMetrics(metrics: HttpMetrics): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      metrics.requestAnswered({
        method: ctx.method,
        route: (ctx.state.route as string | undefined) ?? UNMATCHED_ROUTE,
        status: ctx.status,
        seconds: (performance.now() - started) / 1000,
      });
    }
  };
}
