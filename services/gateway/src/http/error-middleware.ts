import type { Logger } from "@bas/service-kit";
import type { Middleware } from "koa";
import { isClientDisconnect } from "./client-disconnect";
import { toErrorResponse } from "./error-response";

/** nginx's "client closed request": recorded for a caller that hung up; nobody receives it. */
const CLIENT_CLOSED_REQUEST = 499;

/**
 * Outermost but for the request metrics: every failure, and every unmatched route, leaves as JSON
 * `{"detail": ...}`: 404 for a path no route serves, 405 (with `Allow`, set by the router) for a method the path does
 * not support.
 */
export function errorMiddleware(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        // Koa turns an unset status into 200 when a body is assigned: the 404 must be set explicitly.
        if (ctx.status === 404) {
          ctx.status = 404;
          ctx.body = { detail: "Not Found" };
        } else if (ctx.status === 405) ctx.body = { detail: "Method Not Allowed" };
      }
    } catch (err) {
      if (isClientDisconnect(err, ctx)) {
        log.debug({ method: ctx.method, path: ctx.path, reason: describe(err) }, "client closed the request");
        ctx.status = CLIENT_CLOSED_REQUEST;
        ctx.body = { detail: "Client closed the request" };
        return;
      }
      const response = toErrorResponse(err);
      if (response.internal) log.error({ err, method: ctx.method, path: ctx.path }, "request failed");
      ctx.status = response.status;
      ctx.body = response.body;
      for (const [name, value] of Object.entries(response.headers ?? {})) ctx.set(name, value);
    }
  };
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 200);
