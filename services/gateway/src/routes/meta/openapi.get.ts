import type { ApiVersion } from "../../http/api-versions";
import { defineRoute } from "../../http/route";

const openApiRoute = (version: ApiVersion) =>
  defineRoute({
    method: "get",
    path: `/api/${version}/openapi.json`,
    auth: "public",
    hidden: true,
    operationId: `get${version.toUpperCase()}OpenApiDocument`,
    summary: `The OpenAPI 3.1 document of the ${version} API`,
    responses: { 200: { description: "OpenAPI document" } },
    async handler(_request, deps) {
      return { body: deps.openApiDocument(version), headers: { "Cache-Control": "public, max-age=60" } };
    },
  });

export const route = openApiRoute("v3");
export const v4Route = openApiRoute("v4");
