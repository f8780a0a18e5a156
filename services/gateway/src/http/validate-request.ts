import type { z } from "zod";
import type { RequestSchemas } from "./route";
import {
  type RequestPart,
  RequestValidationError,
  toValidationItems,
  type ValidationErrorItem,
} from "./validation-error";

export interface RawRequest {
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  /** Parsed JSON, or undefined when the request had no body. */
  body: unknown;
}

export interface ValidRequest {
  params: unknown;
  query: unknown;
  body: unknown;
}

// A repeated query parameter counts once, with its last value, as most frameworks do.
function lastValues(query: RawRequest["query"]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    out[key] = Array.isArray(value) ? (value.at(-1) ?? "") : value;
  }
  return out;
}

/**
 * Validates every part and reports the faults of all parts together, each located (`["query","page_size"]`).
 * A missing body is an empty object: every body this API takes has only optional fields or defaults.
 */
export function validateRequest(schemas: RequestSchemas, raw: RawRequest): ValidRequest {
  const problems: ValidationErrorItem[] = [];
  const check = (part: RequestPart, schema: z.ZodType | undefined, value: unknown) => {
    if (!schema) return undefined;
    const result = schema.safeParse(value, { reportInput: true });
    if (result.success) return result.data;
    problems.push(...toValidationItems(part, result.error.issues));
    return undefined;
  };
  const valid = {
    params: check("path", schemas.params, raw.params),
    query: check("query", schemas.query, lastValues(raw.query)),
    body: check("body", schemas.body, raw.body === undefined ? {} : raw.body),
  };
  if (problems.length > 0) throw new RequestValidationError(problems);
  return valid;
}
