import { z } from "zod";
import { HttpError } from "../../http/http-error";
import { defineRoute } from "../../http/route";
import { DOCS_ASSETS, docsAsset } from "./docs-assets";

export const route = defineRoute({
  method: "get",
  path: "/api/v3/docs/{file}",
  auth: "public",
  hidden: true,
  operationId: "getDocsAsset",
  summary: "A file of the docs page",
  request: { params: z.object({ file: z.string() }) },
  responses: { 200: { description: "The file" } },
  async handler({ params }) {
    const data = docsAsset(params.file);
    if (!data) throw new HttpError(404, "Not Found");
    return { body: data, type: DOCS_ASSETS[params.file], headers: { "Cache-Control": "public, max-age=86400" } };
  },
});
