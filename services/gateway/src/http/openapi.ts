import { z } from "zod";
import { ErrorDetail, HTTPValidationError } from "../schemas/common";
import type { GatewayDeps } from "./gateway-deps";
import type { AnyRoute, RequestSchemas, ResponseSpec } from "./route";

type JsonSchema = Record<string, any>;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Bad request (for example a model that needs your own provider key)",
  401: "Missing or invalid API key",
  402: "Insufficient credits",
  403: "Forbidden",
  404: "Not found",
  409: "Conflict with the resource's state",
  410: "Gone",
  413: "Request body too large",
  422: "Validation error",
  429: "Too many requests (the project's rate limit, with Retry-After) or too many active sessions or browsers",
  503: "A service is temporarily unavailable",
};

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
  serverUrl?: string;
}

/**
 * Builds the OpenAPI 3.1 document from the route definitions: the same zod schemas that validate requests describe
 * them. Schemas with an `id` become `components/schemas` entries.
 */
export function buildOpenApiDocument(routes: readonly AnyRoute[], deps: GatewayDeps, info: OpenApiInfo): object {
  const components: Record<string, JsonSchema> = {};

  const refsTo = (json: unknown, names: Record<string, string>): JsonSchema =>
    JSON.parse(
      JSON.stringify(json).replace(/"#\/\$defs\/([^"]+)"/g, (_m, id: string) =>
        JSON.stringify(`#/components/schemas/${names[id] ?? id}`),
      ),
    );

  function toJson(schema: z.ZodType, io: "input" | "output"): JsonSchema {
    const json = z.toJSONSchema(schema, {
      target: "draft-2020-12",
      io,
      unrepresentable: "any",
      // z.int() documents the safe-integer range; that is noise to a reader of the API.
      override: ({ jsonSchema }) => {
        if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
        if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      },
    }) as JsonSchema;
    const { $schema: _s, $defs = {}, ...rest } = json;
    // The same id can differ between request (input) and response (output) form; keep both, apart.
    const names: Record<string, string> = {};
    for (const [id, def] of Object.entries($defs as Record<string, JsonSchema>)) {
      const existing = components[id];
      const same = !existing || JSON.stringify(existing) === JSON.stringify(refsTo(def, {}));
      names[id] = same ? id : `${id}${io === "input" ? "Input" : "Output"}`;
    }
    for (const [id, def] of Object.entries($defs as Record<string, JsonSchema>))
      components[names[id]] = refsTo(def, names);
    return refsTo(rest, names);
  }

  function parameters(location: "path" | "query", schema: z.ZodObject | undefined) {
    if (!schema) return [];
    return Object.entries(schema.shape).map(([name, field]) => {
      const { description, ...json } = toJson(field as z.ZodType, "input");
      return {
        name,
        in: location,
        required: location === "path" || !(field as z.ZodType).safeParse(undefined).success,
        ...(description ? { description } : {}),
        schema: json,
      };
    });
  }

  function responses(route: AnyRoute, specs: Record<number, ResponseSpec>, hasInput: boolean) {
    const out: Record<string, object> = {};
    for (const [status, spec] of Object.entries(specs)) {
      out[status] = {
        description: spec.description,
        ...(spec.schema
          ? { content: { [spec.contentType ?? "application/json"]: { schema: toJson(spec.schema, "output") } } }
          : spec.contentType
            ? { content: { [spec.contentType]: { schema: {} } } }
            : {}),
      };
    }
    const errorStatuses = new Set([...(route.errors ?? []), ...(route.auth === "api-key" ? [401, 429] : [])]);
    for (const status of [...errorStatuses].sort()) {
      out[status] = {
        description: ERROR_DESCRIPTIONS[status] ?? "Error",
        content: { "application/json": { schema: toJson(ErrorDetail, "output") } },
      };
    }
    if (hasInput)
      out[422] = {
        description: ERROR_DESCRIPTIONS[422],
        content: { "application/json": { schema: toJson(HTTPValidationError, "output") } },
      };
    return out;
  }

  const paths: Record<string, Record<string, object>> = {};
  for (const route of routes) {
    if (route.hidden) continue;
    const request: RequestSchemas = (typeof route.request === "function" ? route.request(deps) : route.request) ?? {};
    const specs = typeof route.responses === "function" ? route.responses(deps) : route.responses;
    const params = [...parameters("path", request.params), ...parameters("query", request.query)];
    paths[route.path] ??= {};
    paths[route.path][route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.tags ? { tags: route.tags } : {}),
      ...(params.length ? { parameters: params } : {}),
      ...(request.body
        ? {
            requestBody: {
              required: false,
              content: { "application/json": { schema: toJson(request.body, "input") } },
            },
          }
        : {}),
      responses: responses(route, specs, Boolean(request.body || params.length)),
      ...(route.auth === "api-key" ? {} : { security: [] }),
    };
  }

  return {
    openapi: "3.1.0",
    info: { title: info.title, version: info.version, ...(info.description ? { description: info.description } : {}) },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    // Either header: ours, or the official Browser Use clients' (alternatives, as OpenAPI lists them).
    security: [{ APIKeyHeader: [] }, { BrowserUseAPIKeyHeader: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        APIKeyHeader: { type: "apiKey", in: "header", name: "X-Service-API-Key" },
        BrowserUseAPIKeyHeader: {
          type: "apiKey",
          in: "header",
          name: "X-Browser-Use-API-Key",
          description: "The same key, in the header the official Browser Use clients send.",
        },
      },
    },
  };
}
