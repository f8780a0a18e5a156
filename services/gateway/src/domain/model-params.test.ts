import { unsupportedModelParam } from "./model-params";

test("a thinking level only for a model that reasons, sampling parameters only for one that does not", () => {
  const reasoning = { reasoning: true };
  const plain = { reasoning: false };
  expect(unsupportedModelParam("o4-mini", { thinkingLevel: "high", maxOutputTokens: 500 }, reasoning)).toBeNull();
  expect(unsupportedModelParam("gpt-4o", { temperature: 0.2, topP: 0.9, maxOutputTokens: 500 }, plain)).toBeNull();
  expect(unsupportedModelParam("gpt-4o", { thinkingLevel: "low" }, plain)).toMatchObject({
    field: "thinkingLevel",
    message: expect.stringContaining("'gpt-4o' does not reason"),
  });
  expect(unsupportedModelParam("o4-mini", { topP: 0.5 }, reasoning)).toMatchObject({ field: "topP" });
  // null is "not given".
  expect(unsupportedModelParam("o4-mini", { temperature: null, thinkingLevel: null }, reasoning)).toBeNull();
});
