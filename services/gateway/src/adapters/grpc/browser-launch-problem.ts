import { status } from "@grpc/grpc-js";
import { ClientError } from "@bas/service-kit";
import type { ServiceClients } from "./clients";

/**
 * Why the browser pool cannot launch browsers (`"Chromium not found at ..."`), or undefined when it can. A pool too
 * old to answer the question is taken at its word that it serves; any other failure to answer throws.
 */
export async function browserLaunchProblem(
  browserPool: ServiceClients["browserPool"],
  deadlineMs: number,
): Promise<string | undefined> {
  try {
    const health = await browserPool.getLaunchHealth({}, { deadlineMs });
    return health.canLaunch ? undefined : health.problem || "it cannot launch browsers";
  } catch (err) {
    if (err instanceof ClientError && err.code === status.UNIMPLEMENTED) return undefined;
    throw err;
  }
}
