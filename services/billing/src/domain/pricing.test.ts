import fc from "fast-check";
import { DECIMAL_PATTERN, formatDecimal, parseDecimal } from "./money";
import { createModelCatalog } from "@bas/models";
import { buildPriceTable, modelPrice, parsePriceTable } from "./price-table";
import { priceLlm, priceUsage } from "./pricing";

const pricing = {
  table: parsePriceTable({
    models: { m: { inputPerMillionUsd: "3", outputPerMillionUsd: "15" } },
    fallbackModel: "m",
    ownKeyFactor: "0.2",
    proxyPerGbUsd: "8.5",
    browserPerHourUsd: "0.09",
  }),
  canonical: (model: string) => (model === "alias" ? "m" : model),
};

test("an LLM call costs its tokens at the model's price per million, times the factor with an own key", () => {
  // 2000 × 3/1e6 + 500 × 15/1e6 = 0.006 + 0.0075 = 0.0135; own key × 0.2 = 0.0027
  const call = { model: "m", inputTokens: 2000, outputTokens: 500, ownKey: false };
  expect(formatDecimal(priceLlm(pricing, call))).toBe("0.0135");
  expect(formatDecimal(priceLlm(pricing, { ...call, ownKey: true }))).toBe("0.0027");
  expect(formatDecimal(priceLlm(pricing, { ...call, model: "alias" }))).toBe("0.0135");
});

test("a model missing from the table is charged at the fallback model's price", () => {
  const call = { model: "unknown-model", inputTokens: 1_000_000, outputTokens: 0, ownKey: false };
  expect(formatDecimal(priceLlm(pricing, call))).toBe("3");
});

test("proxy bytes cost per decimal GB; browser time per hour, rounded half up at 10 decimal places", () => {
  // 3,000,000 bytes × 8.5 / 1e9 = 0.0255
  expect(formatDecimal(priceUsage(pricing, { kind: "proxy", bytes: 3_000_000 }).amount)).toBe("0.0255");
  // 1 byte × 8.5 / 1e9 = 0.0000000085 (exactly representable at 10 places)
  expect(formatDecimal(priceUsage(pricing, { kind: "proxy", bytes: 1 }).amount)).toBe("0.0000000085");
  // 1 ms × 0.09 / 3.6e6 = 0.000000025
  expect(formatDecimal(priceUsage(pricing, { kind: "browser", milliseconds: 1 }).amount)).toBe("0.000000025");
  // 7 ms × 0.09 / 3.6e6 = 0.000000175; 1 s = 0.000025; 1 h = 0.09
  expect(formatDecimal(priceUsage(pricing, { kind: "browser", milliseconds: 3_600_000 }).amount)).toBe("0.09");
  const odd = { ...pricing, table: { ...pricing.table, browserPerHourUsd: parseDecimal("0.06")! } };
  // 1 ms × 0.06 / 3.6e6 = 0.00000001666… → 0.0000000167; 2 ms → 0.0000000333…→ 0.0000000333
  expect(formatDecimal(priceUsage(odd, { kind: "browser", milliseconds: 1 }).amount)).toBe("0.0000000167");
  expect(formatDecimal(priceUsage(odd, { kind: "browser", milliseconds: 2 }).amount)).toBe("0.0000000333");
});

test("every amount is a plain decimal string of the spec's pattern, never exponent notation", () => {
  const table = buildPriceTable();
  fc.assert(
    fc.property(
      fc.constantFrom(...table.models.keys()),
      fc.nat({ max: 10_000_000 }),
      fc.nat({ max: 10_000_000 }),
      fc.boolean(),
      fc.nat({ max: 2 ** 40 }),
      fc.nat({ max: 10 ** 9 }),
      (model, input, output, ownKey, bytes, ms) => {
        for (const usage of [
          { kind: "llm" as const, model, inputTokens: input, outputTokens: output, ownKey },
          { kind: "proxy" as const, bytes },
          { kind: "browser" as const, milliseconds: ms },
        ]) {
          const text = formatDecimal(priceUsage({ table }, usage).amount);
          expect(text).toMatch(DECIMAL_PATTERN);
          expect(text).not.toMatch(/e/i);
        }
      },
    ),
  );
});

test("decimal strings of the spec's pattern parse; anything else does not", () => {
  for (const ok of ["0", "1.5", ".5", "5.", "+2", "0010.2500"]) expect(parseDecimal(ok)).toBeDefined();
  for (const bad of ["", ".", "+", "-.", "abc", "1e3", "1,5", "Infinity", "NaN"])
    expect(parseDecimal(bad)).toBeUndefined();
  expect(formatDecimal(parseDecimal("0010.2500")!)).toBe("10.25");
  expect(formatDecimal(parseDecimal("0.00000000001")!)).toBe("0.00000000001");
});

test("a price table whose fallback model has no price is refused", () => {
  expect(() => parsePriceTable({ fallbackModel: "nope" })).toThrow(/fallbackModel/);
  expect(() => parsePriceTable({ proxyPerGbUsd: "-1" })).toThrow(/non-negative/);
  expect(() => parsePriceTable({ surprise: 1 })).toThrow();
});

test("the default table prices every model value of the default catalog (aliases at their tier's price)", () => {
  const catalog = createModelCatalog();
  const table = buildPriceTable();
  expect(catalog.ids).toHaveLength(21);
  for (const id of catalog.ids) expect(modelPrice(table, id, catalog.canonical).listed).toBe(true);
});
