import { type Money, roundCharge } from "./money";
import { modelPrice, type PriceTable } from "./price-table";
import type { UsageKind, UsageQuantity } from "./usage";

const TOKENS_PER_MILLION = 1_000_000;
/** Decimal units: 1 GB = 10^9 bytes, 1 MB = 10^6 bytes (so proxyUsedMb and the per-GB price agree). */
export const BYTES_PER_GB = 1_000_000_000;
export const BYTES_PER_MB = 1_000_000;
const MILLISECONDS_PER_HOUR = 3_600_000;

/** A priced usage: what to add to every ledger it belongs to. */
export interface Charge {
  kind: UsageKind;
  /** USD, rounded to the ledger's scale. */
  amount: Money;
  model?: string;
  ownKey: boolean;
  inputTokens: number;
  outputTokens: number;
  proxyBytes: number;
  browserMilliseconds: number;
}

export interface Pricing {
  table: PriceTable;
  /** Maps a model alias to the value it stands for (from the model catalog). */
  canonical?: (model: string) => string;
}

/** USD for one LLM call: list prices per million tokens, times the own-key factor when the caller's key served it. */
export function priceLlm(
  pricing: Pricing,
  call: { model: string; inputTokens: number; outputTokens: number; ownKey: boolean },
): Money {
  const { price } = modelPrice(pricing.table, call.model, pricing.canonical);
  const list = price.inputPerMillionUsd
    .times(call.inputTokens)
    .plus(price.outputPerMillionUsd.times(call.outputTokens))
    .dividedBy(TOKENS_PER_MILLION);
  return roundCharge(call.ownKey ? list.times(pricing.table.ownKeyFactor) : list);
}

/** Prices one usage fact. Pure: the table is data. */
export function priceUsage(pricing: Pricing, usage: UsageQuantity): Charge {
  const none = { ownKey: false, inputTokens: 0, outputTokens: 0, proxyBytes: 0, browserMilliseconds: 0 };
  switch (usage.kind) {
    case "llm":
      return {
        ...none,
        kind: "llm",
        amount: priceLlm(pricing, usage),
        model: usage.model,
        ownKey: usage.ownKey,
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
      };
    case "proxy":
      return {
        ...none,
        kind: "proxy",
        amount: roundCharge(pricing.table.proxyPerGbUsd.times(usage.bytes).dividedBy(BYTES_PER_GB)),
        proxyBytes: usage.bytes,
      };
    case "browser":
      return {
        ...none,
        kind: "browser",
        amount: roundCharge(pricing.table.browserPerHourUsd.times(usage.milliseconds).dividedBy(MILLISECONDS_PER_HOUR)),
        browserMilliseconds: usage.milliseconds,
      };
    default: {
      const never: never = usage;
      throw new Error(`unknown usage ${JSON.stringify(never)}`);
    }
  }
}
