import { z } from "zod";
import { toValidationItems } from "./validation-error";

const issuesOf = (schema: z.ZodType, value: unknown) => {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) throw new Error("expected a failure");
  return result.error.issues;
};

test("given an array field, when an element is wrong, then loc ends with its integer index", () => {
  const schema = z.object({ files: z.array(z.object({ name: z.string(), size: z.int().min(0) })) });
  const items = toValidationItems(
    "body",
    issuesOf(schema, {
      files: [
        { name: "a", size: 1 },
        { name: 2, size: -1 },
      ],
    }),
  );
  expect(items).toEqual([
    { loc: ["body", "files", 1, "name"], msg: "Input should be a valid string", type: "string_type" },
    {
      loc: ["body", "files", 1, "size"],
      msg: "Input should be greater than or equal to 0",
      type: "greater_than_equal",
    },
  ]);
});

test("given a missing required field, then it is `missing` / `Field required`", () => {
  const items = toValidationItems("body", issuesOf(z.object({ text: z.string() }), {}));
  expect(items).toEqual([{ loc: ["body", "text"], msg: "Field required", type: "missing" }]);
});

test("given a too long list or string, then the message names the bound", () => {
  const schema = z.object({ tags: z.array(z.string()).max(2), name: z.string().max(3) });
  expect(toValidationItems("body", issuesOf(schema, { tags: ["a", "b", "c"], name: "abcd" }))).toEqual([
    { loc: ["body", "tags"], msg: "List should have at most 2 items", type: "too_long" },
    { loc: ["body", "name"], msg: "String should have at most 3 characters", type: "string_too_long" },
  ]);
});

test("given a literal, then the message names the one allowed value", () => {
  expect(toValidationItems("body", issuesOf(z.object({ action: z.literal("stop") }), { action: "go" }))).toEqual([
    { loc: ["body", "action"], msg: "Input should be 'stop'", type: "literal_error" },
  ]);
});
