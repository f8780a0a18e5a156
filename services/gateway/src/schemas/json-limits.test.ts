import { jsonDepth, jsonLimitProblem, MAX_JSON_CHARS, MAX_JSON_DEPTH } from "./json-limits";

const nested = (levels: number) => JSON.parse(`${'{"a":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`);

test("depth counts objects and arrays alike; scalars add nothing", () => {
  expect(jsonDepth("text")).toBe(0);
  expect(jsonDepth({})).toBe(1);
  expect(jsonDepth({ a: [{ b: 1 }], c: "x" })).toBe(3);
  expect(jsonDepth(nested(MAX_JSON_DEPTH))).toBe(MAX_JSON_DEPTH);
});

test("a value nested a million levels is measured without overflowing the stack", () => {
  const deep = JSON.parse(`${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`);
  expect(jsonDepth(deep, MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1);
  expect(jsonLimitProblem(deep, "outputSchema")?.type).toBe("json_too_deep");
});

test("within the limits there is no problem; past either, a message that names the field and the limit", () => {
  expect(jsonLimitProblem(nested(MAX_JSON_DEPTH), "outputSchema")).toBeNull();
  expect(jsonLimitProblem(nested(MAX_JSON_DEPTH + 1), "outputSchema")).toEqual({
    type: "json_too_deep",
    message: "outputSchema should be nested at most 32 levels deep (objects and arrays)",
  });
  expect(jsonLimitProblem({ description: "x".repeat(MAX_JSON_CHARS) }, "outputSchema")).toEqual({
    type: "json_too_large",
    message: "outputSchema should have at most 100000 characters as JSON",
  });
});
