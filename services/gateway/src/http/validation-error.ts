import type { z } from "zod";

/** One item of an `HTTPValidationError`: where (`["body","maxCostUsd"]`), what, and a stable error type. */
export interface ValidationErrorItem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export type RequestPart = "body" | "query" | "path";

/** The request did not validate; answered as `422 {"detail": [...]}`. */
export class RequestValidationError extends Error {
  override name = "RequestValidationError";
  constructor(readonly detail: ValidationErrorItem[]) {
    super(detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; "));
  }
}

type Issue = z.core.$ZodIssue & { input?: unknown; params?: Record<string, unknown> };

const quote = (v: unknown) => (typeof v === "string" ? `'${v}'` : String(v));

function oneOf(values: readonly unknown[]): string {
  if (values.length === 1) return `Input should be ${quote(values[0])}`;
  if (values.length > 25) return `Input should be one of the ${values.length} allowed values`;
  return `Input should be ${values.slice(0, -1).map(quote).join(", ")} or ${quote(values.at(-1))}`;
}

/**
 * Error types and messages follow the conventions existing clients of this kind of API already know (pydantic's:
 * `missing`, `int_parsing`, `enum`, ...). Every number the API accepts is an integer, so numeric type errors say so.
 */
function describe(issue: Issue, part: RequestPart, atRoot: boolean): { type: string; msg: string } {
  switch (issue.code) {
    case "invalid_type": {
      const input = issue.input;
      if (input === undefined) return { type: "missing", msg: "Field required" };
      switch (issue.expected) {
        case "number":
        case "int":
          // Query and path values are always text: the text is what failed to parse. In a JSON body a string is
          // the wrong type, as strict as the rest of the body.
          if (part !== "body")
            return {
              type: "int_parsing",
              msg: "Input should be a valid integer, unable to parse string as an integer",
            };
          if (typeof input === "number")
            return {
              type: "int_from_float",
              msg: "Input should be a valid integer, got a number with a fractional part",
            };
          return { type: "int_type", msg: "Input should be a valid integer" };
        case "string":
          return { type: "string_type", msg: "Input should be a valid string" };
        case "boolean":
          return part !== "body"
            ? { type: "bool_parsing", msg: "Input should be a valid boolean, unable to interpret input" }
            : { type: "bool_type", msg: "Input should be a valid boolean" };
        case "object":
        case "record":
          return atRoot
            ? {
                type: "model_attributes_type",
                msg: "Input should be a valid dictionary or object to extract fields from",
              }
            : { type: "dict_type", msg: "Input should be a valid dictionary" };
        case "array":
          return { type: "list_type", msg: "Input should be a valid list" };
        default:
          return { type: `${issue.expected}_type`, msg: `Input should be a valid ${issue.expected}` };
      }
    }
    case "too_small":
    case "too_big": {
      const small = issue.code === "too_small";
      const bound = small ? (issue as z.core.$ZodIssueTooSmall).minimum : (issue as z.core.$ZodIssueTooBig).maximum;
      const inclusive = issue.inclusive !== false;
      if (issue.origin === "string")
        return small
          ? { type: "string_too_short", msg: `String should have at least ${bound} character${bound === 1 ? "" : "s"}` }
          : { type: "string_too_long", msg: `String should have at most ${bound} character${bound === 1 ? "" : "s"}` };
      if (issue.origin === "array" || issue.origin === "set")
        return small
          ? { type: "too_short", msg: `List should have at least ${bound} item${bound === 1 ? "" : "s"}` }
          : { type: "too_long", msg: `List should have at most ${bound} item${bound === 1 ? "" : "s"}` };
      const relation = small ? "greater than" : "less than";
      const type = `${small ? "greater_than" : "less_than"}${inclusive ? "_equal" : ""}`;
      return { type, msg: `Input should be ${relation}${inclusive ? " or equal to" : ""} ${bound}` };
    }
    case "invalid_value":
      return { type: issue.values.length === 1 ? "literal_error" : "enum", msg: oneOf(issue.values) };
    case "invalid_format":
      if (issue.format === "uuid" || issue.format === "guid")
        return { type: "uuid_parsing", msg: "Input should be a valid UUID" };
      if (issue.format === "regex") {
        // zod gives the pattern as a literal (/…/); pydantic names its source.
        const pattern = (issue as z.core.$ZodIssueInvalidStringFormat).pattern?.replace(/^\/(.*)\/[a-z]*$/s, "$1");
        return { type: "string_pattern_mismatch", msg: `String should match pattern '${pattern}'` };
      }
      return { type: `${issue.format}_parsing`, msg: `Input should be a valid ${issue.format}` };
    case "custom":
      return { type: String(issue.params?.type ?? "value_error"), msg: issue.message };
    case "not_multiple_of":
      return { type: "multiple_of", msg: `Input should be a multiple of ${issue.divisor}` };
    default:
      return { type: "value_error", msg: issue.message };
  }
}

/** Zod issues of one request part as `HTTPValidationError` items. */
export function toValidationItems(part: RequestPart, issues: readonly z.core.$ZodIssue[]): ValidationErrorItem[] {
  return issues.flatMap((issue) => {
    const path = issue.path.map((p) => (typeof p === "number" ? p : String(p)));
    // A strict object names each key it does not take, as an item of its own.
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        loc: [part, ...path, key],
        type: "extra_forbidden",
        msg: "Extra inputs are not permitted",
      }));
    }
    return [{ loc: [part, ...path], ...describe(issue as Issue, part, path.length === 0) }];
  });
}
