import { status } from "@grpc/grpc-js";
import type { gateway } from "@bas/proto";
import { ClientError } from "@bas/service-kit/grpc-client";
import { CliError, type Clients } from "./clients";

/**
 * The project a name or id refers to. Every command that takes a project goes through here first, so none of them
 * ever stores a key for, or answers zeros about, a project that does not exist.
 */
export async function resolveProject(clients: Clients, ref: string): Promise<gateway.Project> {
  try {
    return await clients.projects().getProject({ project: ref });
  } catch (err) {
    if (err instanceof ClientError && err.code === status.NOT_FOUND) {
      throw new CliError(`no project named or with id '${ref}': \`bas projects list\` shows them`);
    }
    throw err;
  }
}
