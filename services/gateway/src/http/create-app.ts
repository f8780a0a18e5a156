import { METHODS } from "node:http";
import Router from "@koa/router";
import Koa, { type Context } from "koa";
import type { Authenticator } from "../app/authenticator";
import { authenticateRequest } from "./auth";
import { createBodyDiscarder, createBodyReader } from "./body";
import { isClientDisconnect } from "./client-disconnect";
import { errorMiddleware } from "./error-middleware";
import type { GatewayDeps } from "./gateway-deps";
import type { AnyRoute, AuthenticatedProject, RequestSchemas, RouteResult } from "./route";
import type { ProjectRateLimit } from "./rate-limit";
import { type HttpMetrics, requestMetrics } from "./request-metrics";
import { validateRequest } from "./validate-request";

export interface HttpAppOptions {
  authenticator: Authenticator;
  rateLimit: ProjectRateLimit;
  maxBodyBytes: number;
  /** Told of every answered request. */
  metrics?: HttpMetrics;
}

/** `/api/v3/sessions/{id}` → `/api/v3/sessions/:id` */
const koaPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

// Static segments before parameters, so `/x/docs` is never taken for `/x/{id}`.
const specificity = (path: string) => path.split("/").map((s) => (s.startsWith("{") ? "~" : s));
function byPath(a: AnyRoute, b: AnyRoute): number {
  const x = specificity(a.path);
  const y = specificity(b.path);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  return x.length - y.length;
}

function abortOnDisconnect(ctx: Context): AbortSignal {
  const controller = new AbortController();
  ctx.res.once("close", () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  return controller.signal;
}

function write(ctx: Context, result: RouteResult) {
  ctx.status = result.status ?? 200;
  for (const [name, value] of Object.entries(result.headers ?? {})) ctx.set(name, value);
  if (result.body === undefined) return;
  if (result.type) ctx.type = result.type;
  ctx.body = result.body;
}

/** The Koa application: request metrics, one error middleware, then one router entry per registered route. */
export function createHttpApp(routes: readonly AnyRoute[], deps: GatewayDeps, options: HttpAppOptions): Koa {
  const app = new Koa();
  // Errors are answered and logged by errorMiddleware; Koa's default stderr printing would duplicate them.
  app.silent = true;
  // Koa reports here what fails after the answer began (a blob stream); a caller hanging up mid-download is normal.
  app.on("error", (err, ctx: Context | undefined) => {
    if (ctx && isClientDisconnect(err, ctx))
      deps.log.debug({ path: ctx.path }, "client closed the connection mid-response");
    else deps.log.warn({ err }, "response stream failed");
  });
  if (options.metrics) app.use(requestMetrics(options.metrics));
  app.use(errorMiddleware(deps.log));

  const readBody = createBodyReader(options.maxBodyBytes);
  const discardBody = createBodyDiscarder(options.maxBodyBytes);
  // Every method Node parses counts as implemented, so that an unsupported one (TRACE, PROPFIND, M-SEARCH) on a known
  // path is a 405 with `Allow` like PUT is, and on an unknown path a 404, instead of the router's 501.
  const router = new Router({ methods: [...METHODS] });
  for (const route of [...routes].sort(byPath)) {
    const schemas: RequestSchemas = (typeof route.request === "function" ? route.request(deps) : route.request) ?? {};
    router[route.method](koaPath(route.path), async (ctx) => {
      ctx.state.route = route.path;
      let project: AuthenticatedProject | undefined;
      if (route.auth === "api-key") {
        project = await authenticateRequest(ctx.headers, options.authenticator);
        await options.rateLimit.admit(project.projectId);
      }
      let body: unknown;
      if (schemas.body) body = await readBody(ctx);
      else if (!route.rawBody) await discardBody(ctx);
      const valid = validateRequest(schemas, { params: ctx.params, query: ctx.query, body });
      const result = await route.handler(
        { ...valid, project, headers: ctx.headers, stream: ctx.req, signal: abortOnDisconnect(ctx) },
        deps,
      );
      write(ctx, result);
    });
  }
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
