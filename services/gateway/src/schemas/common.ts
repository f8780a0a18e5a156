import { z } from "zod";

/**
 * Any 8-4-4-4-12 hex UUID (not only RFC versions 1-8), lowercased: ids are compared as lowercase strings downstream.
 */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export const Uuid = z
  .string()
  .refine((s) => UUID_PATTERN.test(s), { message: "Input should be a valid UUID", params: { type: "uuid_parsing" } })
  .transform((s) => s.toLowerCase())
  .meta({ format: "uuid" });

/** Path parameter `{id}`. */
export const IdParams = z.object({ id: Uuid.describe("Resource id (UUID).") });

const INTEGER_TEXT = /^\s*[+-]?\d{1,15}\s*$/;

/** The largest value of a protobuf `int32`: every integer the gateway passes on to a service is one. */
export const INT32_MAX = 2_147_483_647;

/**
 * An integer query parameter. Query values are text: a value that is not an integer's digits is left as text so the
 * integer check rejects it (`int_parsing`) instead of coercing `"1.5"` or `""` into a number. Without an explicit
 * `max` the bound is INT32_MAX, so a larger number is a 422 (`less_than_equal`) and never reaches gRPC, where it
 * cannot be encoded.
 */
export function queryInt(options: { min: number; max?: number; default: number; description: string }) {
  const inner = z
    .int()
    .min(options.min)
    .max(options.max ?? INT32_MAX);
  return z.preprocess(
    (v) => (typeof v === "string" && INTEGER_TEXT.test(v) ? Number(v) : v),
    inner.default(options.default).describe(options.description),
  );
}

const BOOLEAN_TEXT: Record<string, boolean> = { true: true, false: false, "1": true, "0": false, yes: true, no: false };

/** A boolean query parameter: `true`/`false` (also `1`/`0`, `yes`/`no`); other text is a 422 (`bool_parsing`). */
export function queryBool(options: { default: boolean; description: string }) {
  return z.preprocess(
    (v) => (typeof v === "string" && v.toLowerCase() in BOOLEAN_TEXT ? BOOLEAN_TEXT[v.toLowerCase()] : v),
    z.boolean().default(options.default).describe(options.description),
  );
}

/** A timestamp as the API writes it: ISO-8601 UTC. */
export const DateTime = z.string().meta({ format: "date-time" });

/** `{"detail": "..."}`: every non-validation error. */
export const ErrorDetail = z.object({ detail: z.string() }).meta({ id: "ErrorDetail" });

export const ValidationError = z
  .object({
    loc: z.array(z.union([z.string(), z.int()])),
    msg: z.string(),
    type: z.string(),
  })
  .meta({ id: "ValidationError" });

export const HTTPValidationError = z
  .object({ detail: z.array(ValidationError).optional() })
  .meta({ id: "HTTPValidationError" });
