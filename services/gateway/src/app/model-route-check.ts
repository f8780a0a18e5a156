import type { runner } from "@bas/proto";
import { ClientError, type PromiseClient } from "@bas/service-kit";
import { BadRequestError } from "@bas/errors";
import type { RouteTraits } from "../domain/model-params";

/**
 * A task needs a model endpoint: one the runners do not have is refused at creation (400), not failed later. Answers
 * what the route is like, or undefined when no runner could say.
 */
export type ModelRouteCheck = (model: string) => Promise<RouteTraits | undefined>;

/**
 * Asks the runners' route table. Without a runner configured (a gateway run on its own) there is nothing to check;
 * a runner that does not answer does not block the task: it is queued, and a runner that comes back without a
 * route for it fails it with the same explanation.
 */
export function createModelRouteCheck(
  client: PromiseClient<InstanceType<typeof runner.RunnerClient>> | undefined,
): ModelRouteCheck {
  if (!client) return async () => undefined;
  return async (model) => {
    const answer = await client.checkModelRoute({ model }).catch((err: unknown) => {
      if (err instanceof ClientError && err.retryable) return undefined;
      throw err;
    });
    if (!answer) return undefined;
    if (!answer.configured) {
      throw new BadRequestError(
        `No model endpoint is configured for model '${model}', so no task can run. Start the service with ` +
          "LLM_BASE_URL (and LLM_API_KEY) set to an OpenAI-compatible endpoint (OpenAI, a local Ollama or vLLM, ...), " +
          "or with MODEL_ROUTES.",
      );
    }
    return { reasoning: answer.reasoning };
  };
}
