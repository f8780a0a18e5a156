import { defineRoute } from "../../http/route";
import { DOCS_PAGE } from "./docs-assets";

export const route = defineRoute({
  method: "get",
  path: "/api/v3/docs",
  auth: "public",
  hidden: true,
  operationId: "getDocsPage",
  summary: "Human-readable API documentation",
  responses: { 200: { description: "HTML page", contentType: "text/html" } },
  async handler() {
    return { body: DOCS_PAGE, type: "text/html; charset=utf-8" };
  },
});
