import type { Authenticator } from "../app/authenticator";
import { HttpError } from "./http-error";
import type { AuthenticatedProject } from "./route";

/** Where callers send their key: ours, and the one the official Browser Use clients send (so they work unchanged). */
const API_KEY_HEADERS = ["x-service-api-key", "x-browser-use-api-key"] as const;

type Headers = Record<string, string | string[] | undefined>;

/** The key a request carries, in either header; a request naming two different keys is refused, not guessed at. */
function keyOf(headers: Headers): string | undefined {
  const keys = new Set<string>();
  for (const name of API_KEY_HEADERS) {
    const value = headers[name];
    const key = (Array.isArray(value) ? value[0] : value)?.trim();
    if (key) keys.add(key);
  }
  if (keys.size > 1) throw new HttpError(401, "Two different API keys: send one, in X-Service-API-Key");
  return keys.values().next().value;
}

/**
 * The caller's project from the `X-Service-API-Key` header (or `X-Browser-Use-API-Key`); 401 when missing, unknown or
 * revoked.
 */
export async function authenticateRequest(
  headers: Headers,
  authenticator: Authenticator,
): Promise<AuthenticatedProject> {
  const key = keyOf(headers);
  if (!key) throw new HttpError(401, "Missing API key: send it in the X-Service-API-Key header");
  let project: AuthenticatedProject | null;
  try {
    project = await authenticator.authenticate(key);
  } catch {
    // The key store is unreachable: the caller's key may well be fine, so this is not a 401.
    throw new HttpError(503, "Authentication is temporarily unavailable; retry shortly", { "Retry-After": "1" });
  }
  if (!project) throw new HttpError(401, "Invalid API key");
  return project;
}
