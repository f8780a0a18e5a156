import Decimal from "decimal.js";

/**
 * Exact decimal arithmetic for money, megabytes and prices. A private clone so no other module's Decimal settings
 * can change ours; 60 significant digits is far beyond any sum billing makes, so only `roundCharge` ever rounds.
 */
export const Money = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -60, toExpPos: 60 });
export type Money = InstanceType<typeof Money>;

/** Decimal places a single charge is rounded to (1e-10 USD); totals are exact sums of rounded charges. */
export const CHARGE_SCALE = 10;

/** The spec's decimal-string pattern; every decimal billing emits or accepts matches it. */
export const DECIMAL_PATTERN = /^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$/;

export const ZERO = new Money(0);

/** Parses a decimal string of the spec's pattern (or a plain number); undefined when it is not one. */
export function parseDecimal(value: string | number): Money | undefined {
  const text = typeof value === "number" ? String(value) : value.trim();
  if (typeof value === "number" && !Number.isFinite(value)) return undefined;
  if (!DECIMAL_PATTERN.test(text) || /[eE]/.test(text)) return undefined;
  // "5." and ".5" are valid in the pattern; Decimal wants a digit on both sides of the point.
  const normalised = text.replace(/^([+-]?)\./, "$10.").replace(/\.$/, "");
  try {
    return new Money(normalised);
  } catch {
    return undefined;
  }
}

/** Plain notation, no exponent, no trailing zeros: "0", "0.0123", "12.5". */
export function formatDecimal(value: Money): string {
  const text = value.toFixed();
  return text === "-0" ? "0" : text;
}

/** Rounds one charge to the ledger's scale (half up; charges are never negative). */
export function roundCharge(value: Money): Money {
  return value.toDecimalPlaces(CHARGE_SCALE, Money.ROUND_HALF_UP);
}
