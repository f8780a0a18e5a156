/** What the runners know of the route that serves a model. */
export interface RouteTraits {
  /** The model reasons: it takes a thinking level, and no sampling parameters. */
  reasoning: boolean;
}

export interface ModelParamsInput {
  thinkingLevel?: string | null;
  temperature?: number | null;
  topP?: number | null;
  maxOutputTokens?: number | null;
}

/**
 * The first parameter the model's route does not take, with a message that says what to do: a thinking level goes
 * only to a model that reasons, a temperature or topP only to one that does not (reasoning providers refuse them).
 * Pure.
 */
export function unsupportedModelParam(
  model: string,
  params: ModelParamsInput,
  route: RouteTraits,
): { field: keyof ModelParamsInput; message: string } | null {
  if (!route.reasoning && params.thinkingLevel != null) {
    return {
      field: "thinkingLevel",
      message: `model '${model}' does not reason, so it takes no thinkingLevel; leave it out or choose a reasoning model`,
    };
  }
  for (const field of ["temperature", "topP"] as const) {
    if (route.reasoning && params[field] != null) {
      return {
        field,
        message: `model '${model}' reasons and takes no ${field}; leave it out or set thinkingLevel instead`,
      };
    }
  }
  return null;
}
