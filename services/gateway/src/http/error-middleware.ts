import type { Logger } from "@bas/service-kit";
import type { Middleware } from "koa";
import { toErrorResponse } from "./error-response";

/** Outermost middleware: every failure, and every unmatched route, leaves as JSON `{"detail": ...}`. */
export function errorMiddleware(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) ctx.body = { detail: "Not Found" };
        else if (ctx.status === 405) ctx.body = { detail: "Method Not Allowed" };
      }
    } catch (err) {
      const response = toErrorResponse(err);
      if (response.internal) log.error({ err, method: ctx.method, path: ctx.path }, "request failed");
      ctx.status = response.status;
      ctx.body = response.body;
      for (const [name, value] of Object.entries(response.headers ?? {})) ctx.set(name, value);
    }
  };
}
