import { z } from "zod";

/** Where one model value is served: an OpenAI-compatible endpoint and the provider's name for the model. */
export interface ModelRoute {
  baseUrl: string;
  /** The model name the provider expects. */
  model: string;
  /** The service's key for this provider; absent for endpoints without auth (a local Ollama). */
  apiKey?: string;
  /** Names the provider for `use_own_key`: a project's stored key is looked up under this name. */
  provider: string;
  /** The model takes images: a screenshot goes with each step. */
  vision: boolean;
  /** The provider understands `reasoning_effort`; `thinkingLevel` is only sent when true. */
  reasoning: boolean;
  /** `required` makes the model call a tool; some servers only support `auto`. */
  toolChoice: "required" | "auto";
}

export const routeOverrideSchema = z
  .object({
    baseUrl: z.string().url().optional(),
    model: z.string().min(1).optional(),
    apiKey: z.string().optional(),
    provider: z.string().min(1).optional(),
    vision: z.boolean().optional(),
    reasoning: z.boolean().optional(),
    toolChoice: z.enum(["required", "auto"]).optional(),
  })
  .strict();

/** `MODEL_ROUTES`: model value (or `*` for every model) → what differs from the default route. */
export const modelRoutesSchema = z.record(z.string(), routeOverrideSchema);
export type ModelRouteOverrides = z.infer<typeof modelRoutesSchema>;

/** Provider model names of the service tiers on the default (OpenAI-compatible) route. */
export const DEFAULT_TIER_MODELS: Readonly<Record<string, string>> = {
  "svc-mini": "gpt-4.1-mini",
  "svc-max": "gpt-4.1",
  "svc-ultra": "o3",
};

const REASONING_MODELS = /^(o\d|gpt-5)/;

export interface RouteTableOptions {
  /** The default route's endpoint; without it, only models with a `baseUrl` in MODEL_ROUTES are served. */
  baseUrl?: string;
  apiKey?: string;
  /** One provider model for every model value on the default route (a local Ollama/vLLM serving one model). */
  defaultModel?: string;
  overrides: ModelRouteOverrides;
  /** Alias → the tier it stands for. */
  canonical: (model: string) => string;
}

export interface RouteTable {
  /** The route of a model value; throws NoModelRouteError when no endpoint is configured for it. */
  resolve(model: string): ModelRoute;
  /** An endpoint is configured for the model value (tasks for it can run). */
  serves(model: string): boolean;
  /** The provider name a project's own key for this model is stored under. */
  providerOf(model: string): string;
}

/** No LLM_BASE_URL and no MODEL_ROUTES entry with a `baseUrl` for the model: there is nowhere to send its calls. */
export class NoModelRouteError extends Error {
  override name = "NoModelRouteError";
  constructor(model: string) {
    super(
      `no model endpoint is configured for model '${model}': set LLM_BASE_URL (and LLM_API_KEY) to an ` +
        "OpenAI-compatible endpoint (OpenAI, a local Ollama or vLLM, ...), or MODEL_ROUTES",
    );
  }
}

/**
 * Resolves a model value in order: its own override, its tier's override (for aliases), the `*` override, then the
 * default route. Provider-named models keep their name unless configured otherwise.
 */
export function createRouteTable(options: RouteTableOptions): RouteTable {
  const overridesOf = (model: string) => {
    const tier = options.canonical(model);
    return { tier, own: options.overrides[model] ?? options.overrides[tier] ?? {}, any: options.overrides["*"] ?? {} };
  };
  const baseUrlOf = (model: string) => {
    const { own, any } = overridesOf(model);
    return own.baseUrl ?? any.baseUrl ?? options.baseUrl;
  };
  const providerOf = (model: string) => {
    const { own, any } = overridesOf(model);
    return own.provider ?? any.provider ?? "default";
  };
  return {
    serves: (model) => baseUrlOf(model) !== undefined,
    providerOf,
    resolve(model) {
      const baseUrl = baseUrlOf(model);
      if (baseUrl === undefined) throw new NoModelRouteError(model);
      const { tier, own: override, any } = overridesOf(model);
      const providerModel = override.model ?? any.model ?? options.defaultModel ?? DEFAULT_TIER_MODELS[tier] ?? tier;
      const apiKey = override.apiKey ?? any.apiKey ?? options.apiKey;
      return {
        baseUrl,
        model: providerModel,
        ...(apiKey ? { apiKey } : {}),
        provider: providerOf(model),
        vision: override.vision ?? any.vision ?? false,
        reasoning: override.reasoning ?? any.reasoning ?? REASONING_MODELS.test(providerModel),
        toolChoice: override.toolChoice ?? any.toolChoice ?? "required",
      };
    },
  };
}

/** The provider's reasoning parameter for a thinking level; undefined = leave the provider default. */
function reasoningEffort(route: ModelRoute, thinkingLevel: string | undefined): string | undefined {
  if (!route.reasoning || !thinkingLevel) return undefined;
  if (thinkingLevel === "disabled") return "minimal";
  return ["low", "medium", "high"].includes(thinkingLevel) ? thinkingLevel : undefined;
}

/** What a task asks of its model besides the name (a v4 run's `modelParams`). */
export interface AskedParams {
  thinkingLevel?: string;
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
}

/** The parameters sent with each of a task's model calls; absent = the provider's default. */
export interface CallParams {
  reasoningEffort?: string;
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
}

/**
 * The parameters a route takes of what was asked: a reasoning route takes a thinking level and refuses sampling
 * parameters (OpenAI's o-series answer 400 to a temperature), any other route the reverse. The gateway refuses what
 * a route does not take when the run is created; this keeps a task safe that was created while no runner answered.
 */
export function callParams(route: ModelRoute, asked: AskedParams): CallParams {
  const effort = reasoningEffort(route, asked.thinkingLevel);
  return {
    ...(effort ? { reasoningEffort: effort } : {}),
    ...(!route.reasoning && asked.temperature !== undefined ? { temperature: asked.temperature } : {}),
    ...(!route.reasoning && asked.topP !== undefined ? { topP: asked.topP } : {}),
    ...(asked.maxOutputTokens ? { maxOutputTokens: asked.maxOutputTokens } : {}),
  };
}
