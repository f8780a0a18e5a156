import { formatDecimal, type Money, Money as MoneyCtor, parseDecimal, ZERO } from "./money";
import { BYTES_PER_MB, type Charge } from "./pricing";

/** Running totals of one ledger (session, run, browser or project). */
export interface Totals {
  inputTokens: number;
  outputTokens: number;
  proxyUsedMb: Money;
  llmCostUsd: Money;
  proxyCostUsd: Money;
  browserCostUsd: Money;
  totalCostUsd: Money;
}

/** Totals as they travel in events and gRPC: decimal strings of the spec's pattern. */
export interface WireTotals {
  inputTokens: number;
  outputTokens: number;
  proxyUsedMb: string;
  llmCostUsd: string;
  proxyCostUsd: string;
  browserCostUsd: string;
  totalCostUsd: string;
}

export const EMPTY_TOTALS: Totals = {
  inputTokens: 0,
  outputTokens: 0,
  proxyUsedMb: ZERO,
  llmCostUsd: ZERO,
  proxyCostUsd: ZERO,
  browserCostUsd: ZERO,
  totalCostUsd: ZERO,
};

export function addCharge(totals: Totals, charge: Charge): Totals {
  return {
    inputTokens: totals.inputTokens + charge.inputTokens,
    outputTokens: totals.outputTokens + charge.outputTokens,
    proxyUsedMb: totals.proxyUsedMb.plus(new MoneyCtor(charge.proxyBytes).dividedBy(BYTES_PER_MB)),
    llmCostUsd: charge.kind === "llm" ? totals.llmCostUsd.plus(charge.amount) : totals.llmCostUsd,
    proxyCostUsd: charge.kind === "proxy" ? totals.proxyCostUsd.plus(charge.amount) : totals.proxyCostUsd,
    browserCostUsd: charge.kind === "browser" ? totals.browserCostUsd.plus(charge.amount) : totals.browserCostUsd,
    totalCostUsd: totals.totalCostUsd.plus(charge.amount),
  };
}

export function toWireTotals(totals: Totals): WireTotals {
  return {
    inputTokens: totals.inputTokens,
    outputTokens: totals.outputTokens,
    proxyUsedMb: formatDecimal(totals.proxyUsedMb),
    llmCostUsd: formatDecimal(totals.llmCostUsd),
    proxyCostUsd: formatDecimal(totals.proxyCostUsd),
    browserCostUsd: formatDecimal(totals.browserCostUsd),
    totalCostUsd: formatDecimal(totals.totalCostUsd),
  };
}

/** Reads totals back from an event; a missing member counts as zero (proto3 JSON omits defaults). */
export function fromWireTotals(wire: Partial<WireTotals> | undefined): Totals {
  const money = (value: string | undefined) => (value === undefined ? ZERO : (parseDecimal(value) ?? ZERO));
  return {
    inputTokens: Number(wire?.inputTokens ?? 0),
    outputTokens: Number(wire?.outputTokens ?? 0),
    proxyUsedMb: money(wire?.proxyUsedMb),
    llmCostUsd: money(wire?.llmCostUsd),
    proxyCostUsd: money(wire?.proxyCostUsd),
    browserCostUsd: money(wire?.browserCostUsd),
    totalCostUsd: money(wire?.totalCostUsd),
  };
}
