import type { ApiVersion } from "../../http/api-versions";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The swagger-ui files the docs page loads, served from the installed package (no CDN). */
export const DOCS_ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

const loaded = new Map<string, Buffer>();

/** The asset's bytes, read once; only names of DOCS_ASSETS (never a path from the request). */
export function docsAsset(name: string): Buffer | undefined {
  if (!Object.hasOwn(DOCS_ASSETS, name)) return undefined;
  let data = loaded.get(name);
  if (!data) {
    data = readFileSync(join(dirname(require.resolve("swagger-ui-dist/package.json")), name));
    loaded.set(name, data);
  }
  return data;
}

/** The swagger-ui page of one API version; it loads that version's document (relative: any base path works). */
export const docsPage = (version: ApiVersion) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Browser agent service API (${version})</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="docs/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="docs/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: "openapi.json", dom_id: "#swagger-ui", deepLinking: true });
  </script>
</body>
</html>
`;
