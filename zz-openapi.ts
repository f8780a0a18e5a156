import { writeFileSync } from "node:fs";
import { loadModelCatalog } from "@bas/models";
import { API_DOCUMENTS, apiVersionOf } from "./services/gateway/src/http/api-versions";
import { buildOpenApiDocument } from "./services/gateway/src/http/openapi";
import * as routes from "./services/gateway/src/routes";
const ROUTES = Object.values(routes) as any[];
const deps: any = { models: loadModelCatalog(undefined) };
for (const v of ["v3", "v4"] as const) {
  const doc = buildOpenApiDocument(
    ROUTES.filter((r) => apiVersionOf(r.path) === v),
    deps,
    API_DOCUMENTS[v]("http://x"),
  );
  writeFileSync(`/work/tmp-local/ours-${v}.json`, JSON.stringify(doc, null, 1));
}
