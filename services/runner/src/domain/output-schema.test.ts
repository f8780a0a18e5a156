import { createOutputValidator } from "./output-schema";

test("answers are checked against the schema with messages naming the problem", () => {
  const check = createOutputValidator({
    type: "object",
    properties: { price: { type: "number" }, url: { type: "string", format: "uri" } },
    required: ["price"],
    additionalProperties: false,
  });
  expect(check({ price: 3, url: "https://x.test/" })).toEqual({ ok: true });
  const bad = check({ price: "3", url: "nope", extra: 1 });
  expect(bad.ok).toBe(false);
  expect(!bad.ok && bad.errors).toMatch(/\/price must be number/);
  expect(!bad.ok && bad.errors).toMatch(/must NOT have additional properties \(extra\)/);
  expect(!bad.ok && bad.errors).toMatch(/\/url must match format "uri"/);
});

test("2020-12 schemas are understood; a schema that does not compile accepts any answer", () => {
  const check = createOutputValidator({
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "array",
    prefixItems: [{ type: "string" }],
  });
  expect(check(["a"])).toEqual({ ok: true });
  expect(check([1]).ok).toBe(false);
  expect(createOutputValidator({ type: "no-such-type" })(42)).toEqual({ ok: true });
});
