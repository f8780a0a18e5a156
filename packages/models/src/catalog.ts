import { readFileSync } from "node:fs";
import { z } from "zod";

/** One selectable `model` value. */
export interface ModelEntry {
  /** The value callers send (`svc-max`, `gpt-4.1`, ...). */
  id: string;
  kind: "tier" | "alias" | "provider";
  /** For an alias: the tier it stands for. */
  aliasOf?: string;
  /** Selectable only with `use_own_key` (the project's own provider key serves it). */
  requiresOwnKey: boolean;
}

const entrySchema = z.object({
  id: z.string().min(1),
  kind: z.enum(["tier", "alias", "provider"]),
  aliasOf: z.string().optional(),
  requiresOwnKey: z.boolean().default(false),
});

/**
 * The 21 model values of the contract: three service tiers, two legacy aliases of `svc-max`, and sixteen
 * provider-named models. Deployments replace the list with MODEL_CATALOG (a JSON file of ModelEntry).
 */
export const DEFAULT_MODEL_CATALOG: readonly ModelEntry[] = [
  { id: "svc-mini", kind: "tier", requiresOwnKey: false },
  { id: "svc-max", kind: "tier", requiresOwnKey: false },
  { id: "svc-ultra", kind: "tier", requiresOwnKey: false },
  { id: "svc-latest", kind: "alias", aliasOf: "svc-max", requiresOwnKey: false },
  { id: "svc-agent", kind: "alias", aliasOf: "svc-max", requiresOwnKey: false },
  ...[
    ["gpt-4.1", false],
    ["gpt-4.1-mini", false],
    ["gpt-4o", false],
    ["gpt-4o-mini", false],
    ["o3", true],
    ["o4-mini", false],
    ["claude-sonnet-4", false],
    ["claude-opus-4", true],
    ["claude-3-5-haiku", false],
    ["gemini-2.5-pro", false],
    ["gemini-2.5-flash", false],
    ["gemini-2.0-flash", false],
    ["llama-3.3-70b", false],
    ["qwen-2.5-72b", false],
    ["deepseek-v3", false],
    ["mistral-large", true],
  ].map(([id, requiresOwnKey]) => ({ id: id as string, kind: "provider" as const, requiresOwnKey: !!requiresOwnKey })),
];

export const DEFAULT_MODEL = "svc-max";

export interface ModelCatalog {
  entries: readonly ModelEntry[];
  ids: readonly string[];
  get(id: string): ModelEntry | undefined;
  /** The tier an alias stands for; any other id unchanged. */
  canonical(id: string): string;
}

export function createModelCatalog(entries: readonly ModelEntry[] = DEFAULT_MODEL_CATALOG): ModelCatalog {
  const byId = new Map(entries.map((e) => [e.id, e]));
  return {
    entries,
    ids: entries.map((e) => e.id),
    get: (id) => byId.get(id),
    canonical: (id) => byId.get(id)?.aliasOf ?? id,
  };
}

/** The catalog from MODEL_CATALOG (path to a JSON array) or the default one. */
export function loadModelCatalog(path: string | undefined): ModelCatalog {
  if (!path) return createModelCatalog();
  const parsed = z
    .array(entrySchema)
    .min(1)
    .parse(JSON.parse(readFileSync(path, "utf8")));
  return createModelCatalog(parsed);
}
