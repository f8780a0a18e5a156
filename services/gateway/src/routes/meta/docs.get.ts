import type { ApiVersion } from "../../http/api-versions";
import { defineRoute } from "../../http/route";
import { docsPage } from "./docs-assets";

const docsRoute = (version: ApiVersion) =>
  defineRoute({
    method: "get",
    path: `/api/${version}/docs`,
    auth: "public",
    hidden: true,
    operationId: `get${version.toUpperCase()}DocsPage`,
    summary: `Human-readable documentation of the ${version} API`,
    responses: { 200: { description: "HTML page", contentType: "text/html" } },
    async handler() {
      return { body: docsPage(version), type: "text/html; charset=utf-8" };
    },
  });

export const route = docsRoute("v3");
export const v4Route = docsRoute("v4");
