import { defineRoute } from "../../http/route";

export const route = defineRoute({
  method: "get",
  path: "/api/v3/openapi.json",
  auth: "public",
  hidden: true,
  operationId: "getOpenApiDocument",
  summary: "The OpenAPI 3.1 document of this API",
  responses: { 200: { description: "OpenAPI document" } },
  async handler(_request, deps) {
    return { body: deps.openApiDocument(), headers: { "Cache-Control": "public, max-age=60" } };
  },
});
