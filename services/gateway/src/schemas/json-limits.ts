/**
 * Nesting levels of objects and arrays a caller's free-form JSON (an `outputSchema`) may have: `{}` is 1,
 * `{"a":[{}]}` is 3. It crosses gRPC as a `google.protobuf.Value`, whose decoder stops at 100 nested messages; an
 * object costs 3 of them (Value, Struct, map entry), an array 2, and the request around it a few more, so 32 levels
 * of objects is the deepest that every call carrying it (create, read, list) still decodes. The limit is checked
 * with a loop, not recursion, so no input can overflow the stack (as `structuredClone` does at ~10,000 levels).
 */
export const MAX_JSON_DEPTH = 32;

/** Characters of a caller's free-form JSON, serialised; the same bound as a task's text. */
export const MAX_JSON_CHARS = 100_000;

export interface JsonLimitProblem {
  type: "json_too_deep" | "json_too_large";
  message: string;
}

/** The nesting depth of a parsed JSON value, walking it without recursion and stopping once past `limit`. */
export function jsonDepth(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (node === null || typeof node !== "object") continue;
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** Null when `value` is within MAX_JSON_DEPTH and MAX_JSON_CHARS; otherwise what a caller should be told. */
export function jsonLimitProblem(value: unknown, field: string): JsonLimitProblem | null {
  if (jsonDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
    return {
      type: "json_too_deep",
      message: `${field} should be nested at most ${MAX_JSON_DEPTH} levels deep (objects and arrays)`,
    };
  // Serialising is safe once the depth is bounded.
  if (JSON.stringify(value).length > MAX_JSON_CHARS)
    return {
      type: "json_too_large",
      message: `${field} should have at most ${MAX_JSON_CHARS} characters as JSON`,
    };
  return null;
}
