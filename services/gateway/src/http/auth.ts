import type { Authenticator } from "../app/authenticator";
import { HttpError } from "./http-error";
import type { AuthenticatedProject } from "./route";

export const API_KEY_HEADER = "x-service-api-key";

/** The caller's project from the `X-Service-API-Key` header; 401 when missing, unknown or revoked. */
export async function authenticateRequest(
  header: string | string[] | undefined,
  authenticator: Authenticator,
): Promise<AuthenticatedProject> {
  const key = Array.isArray(header) ? header[0] : header;
  if (!key) throw new HttpError(401, "Missing API key: send it in the X-Service-API-Key header");
  let project: AuthenticatedProject | null;
  try {
    project = await authenticator.authenticate(key.trim());
  } catch {
    // The key store is unreachable: the caller's key may well be fine, so this is not a 401.
    throw new HttpError(503, "Authentication is temporarily unavailable; retry shortly", { "Retry-After": "1" });
  }
  if (!project) throw new HttpError(401, "Invalid API key");
  return project;
}
