import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import type { z } from "zod";
import type { GatewayDeps } from "./gateway-deps";

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

/** The project an API key belongs to; every `/api/*` handler acts on behalf of one. */
export interface AuthenticatedProject {
  projectId: string;
  keyId: string;
}

/** What a route validates. Objects for params and query (one entry per parameter); any schema for the body. */
export interface RequestSchemas {
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
}

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Default `application/json`. */
  contentType?: string;
}

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** The validated request a handler sees. */
export interface RouteRequest<R extends RequestSchemas, A extends RouteAuth> {
  params: Out<R["params"]>;
  query: Out<R["query"]>;
  body: Out<R["body"]>;
  project: A extends "api-key" ? AuthenticatedProject : undefined;
  headers: IncomingHttpHeaders;
  /** The raw request body, unread: only for a route with `rawBody` (an upload). */
  stream: Readable;
  /** Aborted when the client goes away; pass it to gRPC calls. */
  signal: AbortSignal;
}

/** What a handler returns; the HTTP adapter writes it. A body that is a Buffer or stream is sent as is. */
export interface RouteResult {
  status?: number;
  body?: unknown;
  /** Content type of a non-JSON body. */
  type?: string;
  headers?: Record<string, string>;
}

/** `api-key`: `X-Service-API-Key` required (every `/api/*` route); `public`: no auth (health, docs, signed blobs). */
export type RouteAuth = "api-key" | "public";

/**
 * One HTTP route: where it lives, who may call it, what it accepts and answers, and its handler. Routes are data, so
 * the same definition drives the router, validation and the OpenAPI document.
 */
export interface Route<R extends RequestSchemas = RequestSchemas, A extends RouteAuth = RouteAuth> {
  method: HttpMethod;
  /** OpenAPI-style path: `/api/v3/sessions/{id}`. */
  path: string;
  auth: A;
  operationId: string;
  summary: string;
  tags?: string[];
  /** Left out of the OpenAPI document (the docs page itself, health). */
  hidden?: boolean;
  /** Schemas may depend on configuration (the model catalog), so they are built from the deps. */
  request?: R | ((deps: GatewayDeps) => R);
  /** Success responses; may depend on configuration like `request`. */
  responses: Record<number, ResponseSpec> | ((deps: GatewayDeps) => Record<number, ResponseSpec>);
  /** The handler reads the body itself from `stream` (an upload of any content type), unparsed. */
  rawBody?: boolean;
  /** Error statuses this route can answer besides 401/422/500 (documented with the `{"detail"}` shape). */
  errors?: number[];
  handler(request: RouteRequest<R, A>, deps: GatewayDeps): Promise<RouteResult>;
}

/** Declares a route with its types inferred from its schemas. */
export function defineRoute<R extends RequestSchemas, A extends RouteAuth>(route: Route<R, A>): Route<R, A> {
  return route;
}

/** A route with its type parameters erased, as the registry holds them. */
export type AnyRoute = Route<any, any>;
