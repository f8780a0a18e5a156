import type { OpenApiInfo } from "./openapi";

/** The API's two versions; each has its own OpenAPI document and docs page (`/api/<version>/openapi.json`, `/docs`). */
export type ApiVersion = "v3" | "v4";
export const API_VERSIONS: readonly ApiVersion[] = ["v3", "v4"];

/** The document a route belongs in: v4's paths in v4's, everything else (v3, blobs, health) in v3's. */
export const apiVersionOf = (path: string): ApiVersion => (path.startsWith("/api/v4/") ? "v4" : "v3");

export const API_DOCUMENTS: Record<ApiVersion, (serverUrl: string) => OpenApiInfo> = {
  v3: (serverUrl) => ({
    title: "Browser agent service API",
    version: "3.0.0",
    description: "Session API (v3): tasks for a hosted browser agent. Authenticate with X-Service-API-Key.",
    serverUrl,
  }),
  v4: (serverUrl) => ({
    title: "Browser agent service API (v4)",
    version: "4.0.0",
    description:
      "Run API (v4): runs in conversation sessions, the cheap status poll, the session queue, run events (paged, or " +
      "pushed as Server-Sent Events), and browsers for CDP clients. Authenticate with X-Service-API-Key.",
    serverUrl,
  }),
};
