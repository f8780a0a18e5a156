import { z } from "zod";
import { type Money, parseDecimal } from "./money";

/** Prices of one model value, USD per million tokens. */
export interface ModelPrice {
  inputPerMillionUsd: Money;
  outputPerMillionUsd: Money;
}

/** Everything billing charges for, from configuration. */
export interface PriceTable {
  models: ReadonlyMap<string, ModelPrice>;
  /** The model whose price applies to a model value the table does not list. */
  fallbackModel: string;
  /** Multiplies the LLM price when the caller's own provider key served the call (only orchestration is charged). */
  ownKeyFactor: Money;
  proxyPerGbUsd: Money;
  browserPerHourUsd: Money;
}

const nonNegativeDecimal = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const parsed = parseDecimal(value);
  if (!parsed || parsed.isNegative()) {
    ctx.addIssue({ code: "custom", message: `expected a non-negative decimal, got ${JSON.stringify(value)}` });
    return z.NEVER;
  }
  return parsed;
});

const modelPriceSchema = z.object({ inputPerMillionUsd: nonNegativeDecimal, outputPerMillionUsd: nonNegativeDecimal });

/** The JSON form of PRICE_TABLE; every member optional, each one given replaces the default. */
export const priceTableSchema = z
  .object({
    models: z.record(z.string().min(1), modelPriceSchema).optional(),
    fallbackModel: z.string().min(1).optional(),
    ownKeyFactor: nonNegativeDecimal.optional(),
    proxyPerGbUsd: nonNegativeDecimal.optional(),
    browserPerHourUsd: nonNegativeDecimal.optional(),
  })
  .strict();

/** USD per million input / output tokens of every model value of the default catalog. */
const DEFAULT_MODEL_PRICES: Record<string, [string, string]> = {
  "svc-mini": ["0.15", "0.6"],
  "svc-max": ["2", "8"],
  "svc-ultra": ["5", "20"],
  "gpt-4.1": ["2", "8"],
  "gpt-4.1-mini": ["0.4", "1.6"],
  "gpt-4o": ["2.5", "10"],
  "gpt-4o-mini": ["0.15", "0.6"],
  o3: ["2", "8"],
  "o4-mini": ["1.1", "4.4"],
  "claude-sonnet-4": ["3", "15"],
  "claude-opus-4": ["15", "75"],
  "claude-3-5-haiku": ["0.8", "4"],
  "gemini-2.5-pro": ["1.25", "10"],
  "gemini-2.5-flash": ["0.3", "2.5"],
  "gemini-2.0-flash": ["0.1", "0.4"],
  "llama-3.3-70b": ["0.6", "0.6"],
  "qwen-2.5-72b": ["0.4", "1.2"],
  "deepseek-v3": ["0.27", "1.1"],
  "mistral-large": ["2", "6"],
};

/** The default table overlaid with whatever the configuration gives (a JSON object of `priceTableSchema`). */
export function buildPriceTable(overrides: z.infer<typeof priceTableSchema> = {}): PriceTable {
  const models = new Map<string, ModelPrice>();
  for (const [id, [input, output]] of Object.entries(DEFAULT_MODEL_PRICES)) {
    models.set(id, { inputPerMillionUsd: parseDecimal(input)!, outputPerMillionUsd: parseDecimal(output)! });
  }
  for (const [id, price] of Object.entries(overrides.models ?? {})) models.set(id, price);
  const fallbackModel = overrides.fallbackModel ?? "svc-max";
  if (!models.has(fallbackModel)) throw new Error(`fallbackModel ${fallbackModel} has no price in the table`);
  return {
    models,
    fallbackModel,
    ownKeyFactor: overrides.ownKeyFactor ?? parseDecimal("0.1")!,
    proxyPerGbUsd: overrides.proxyPerGbUsd ?? parseDecimal("4")!,
    browserPerHourUsd: overrides.browserPerHourUsd ?? parseDecimal("0.06")!,
  };
}

/** The price of a model value: its own, else (an alias) its tier's, else the fallback model's. */
export function modelPrice(
  table: PriceTable,
  model: string,
  canonical: (model: string) => string = (m) => m,
): { price: ModelPrice; listed: boolean } {
  const own = table.models.get(model) ?? table.models.get(canonical(model));
  return own ? { price: own, listed: true } : { price: table.models.get(table.fallbackModel)!, listed: false };
}

/** A price table from its JSON form (validated); throws a zod error naming the bad member. */
export function parsePriceTable(json: unknown): PriceTable {
  return buildPriceTable(priceTableSchema.parse(json));
}
