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
  baseUrl: string;
  apiKey?: string;
  /** One provider model for every model value on the default route (a local Ollama/vLLM serving one model). */
  defaultModel?: string;
  overrides: ModelRouteOverrides;
  /** Alias → the tier it stands for. */
  canonical: (model: string) => string;
}

export interface RouteTable {
  resolve(model: string): ModelRoute;
}

/**
 * Resolves a model value in order: its own override, its tier's override (for aliases), the `*` override, then the
 * default route. Provider-named models keep their name unless configured otherwise.
 */
export function createRouteTable(options: RouteTableOptions): RouteTable {
  return {
    resolve(model) {
      const tier = options.canonical(model);
      const override = options.overrides[model] ?? options.overrides[tier] ?? {};
      const any = options.overrides["*"] ?? {};
      const providerModel = override.model ?? any.model ?? options.defaultModel ?? DEFAULT_TIER_MODELS[tier] ?? tier;
      const apiKey = override.apiKey ?? any.apiKey ?? options.apiKey;
      return {
        baseUrl: override.baseUrl ?? any.baseUrl ?? options.baseUrl,
        model: providerModel,
        ...(apiKey ? { apiKey } : {}),
        provider: override.provider ?? any.provider ?? "default",
        vision: override.vision ?? any.vision ?? false,
        reasoning: override.reasoning ?? any.reasoning ?? REASONING_MODELS.test(providerModel),
        toolChoice: override.toolChoice ?? any.toolChoice ?? "required",
      };
    },
  };
}

/** The provider's reasoning parameter for a thinking level; undefined = leave the provider default. */
export function reasoningEffort(route: ModelRoute, thinkingLevel: string | undefined): string | undefined {
  if (!route.reasoning || !thinkingLevel) return undefined;
  if (thinkingLevel === "disabled") return "minimal";
  return ["low", "medium", "high"].includes(thinkingLevel) ? thinkingLevel : undefined;
}
