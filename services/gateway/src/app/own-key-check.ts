import type { runner } from "@bas/proto";
import type { PromiseClient } from "@bas/service-kit";
import { BadRequestError } from "@bas/errors";

/** With `use_own_key`, the project must have stored a key for the provider that serves the model. */
export type OwnKeyCheck = (projectId: string, model: string) => Promise<void>;

/** Asks the runners' key store; without a runner configured (a gateway run on its own) there is nothing to check. */
export function createOwnKeyCheck(
  client: PromiseClient<InstanceType<typeof runner.RunnerClient>> | undefined,
): OwnKeyCheck {
  if (!client) return async () => {};
  return async (projectId, model) => {
    const { present, provider } = await client.checkOwnKey({ projectId, model });
    if (!present) {
      throw new BadRequestError(
        `use_own_key is set but the project has no stored API key for provider '${provider}' (model '${model}'): store one first`,
      );
    }
  };
}
