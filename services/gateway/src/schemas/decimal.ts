import { Decimal } from "decimal.js";
import { z } from "zod";

/** The spec's pattern for decimal strings: optional sign, digits, optional point; not only signs and dots. */
export const DECIMAL_PATTERN = /^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$/;
const PATTERN_TEXT = "^(?!^[-+.]*$)[+-]?0*\\d*\\.?\\d*$";

/** A decimal amount as the API returns it (`"0"`, `"0.0123"`). */
export const DecimalString = z.string().meta({ pattern: PATTERN_TEXT, examples: ["0", "0.0123"] });

/**
 * A positive amount given as a JSON number or a decimal string, normalised to a canonical decimal string
 * (`10.50` → `"10.5"`, `1e-7` → `"0.0000001"`) without going through float arithmetic.
 */
export function positiveDecimalInput(description: string) {
  return z
    .unknown()
    .superRefine((value, ctx) => {
      if (typeof value === "number") {
        if (!Number.isFinite(value) || value <= 0)
          ctx.addIssue({ code: "custom", message: "Input should be greater than 0", params: { type: "greater_than" } });
        return;
      }
      if (typeof value !== "string") {
        ctx.addIssue({
          code: "custom",
          message: "Input should be a valid number or decimal string",
          params: { type: "decimal_type" },
        });
        return;
      }
      if (!DECIMAL_PATTERN.test(value) || value.length > 64) {
        ctx.addIssue({
          code: "custom",
          message: `String should match pattern '${PATTERN_TEXT}'`,
          params: { type: "string_pattern_mismatch" },
        });
        return;
      }
      if (!new Decimal(value).gt(0))
        ctx.addIssue({ code: "custom", message: "Input should be greater than 0", params: { type: "greater_than" } });
    })
    .transform((value) => new Decimal(value as number | string).toFixed())
    .meta({
      description,
      anyOf: [
        { type: "number", exclusiveMinimum: 0 },
        { type: "string", pattern: PATTERN_TEXT },
      ],
    });
}
