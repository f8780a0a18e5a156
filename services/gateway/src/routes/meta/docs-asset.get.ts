import { z } from "zod";
import type { ApiVersion } from "../../http/api-versions";
import { HttpError } from "../../http/http-error";
import { defineRoute } from "../../http/route";
import { DOCS_ASSETS, docsAsset } from "./docs-assets";

const docsAssetRoute = (version: ApiVersion) =>
  defineRoute({
    method: "get",
    path: `/api/${version}/docs/{file}`,
    auth: "public",
    hidden: true,
    operationId: `get${version.toUpperCase()}DocsAsset`,
    summary: "A file of the docs page",
    request: { params: z.object({ file: z.string() }) },
    responses: { 200: { description: "The file" } },
    async handler({ params }) {
      const data = docsAsset(params.file);
      if (!data) throw new HttpError(404, "Not Found");
      return { body: data, type: DOCS_ASSETS[params.file], headers: { "Cache-Control": "public, max-age=86400" } };
    },
  });

export const route = docsAssetRoute("v3");
export const v4Route = docsAssetRoute("v4");
