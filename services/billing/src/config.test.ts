import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "@bas/service-kit";
import { loadBillingConfig } from "./config";
import { formatDecimal } from "./domain/money";

test("defaults: the built-in price table, a default cap of 10 USD, no credit limits", () => {
  const config = loadBillingConfig({});
  expect(config.GRPC_PORT).toBe(50054);
  expect(config.DEFAULT_MAX_COST_USD).toBe("10");
  expect(config.PROJECT_CREDITS).toBeUndefined();
  expect(config.priceTable.models.size).toBeGreaterThanOrEqual(19);
});

test("PRICE_TABLE is inline JSON or a path to a JSON file, overlaying the defaults", () => {
  const inline = loadBillingConfig({
    PRICE_TABLE: '{"proxyPerGbUsd":"7.5","models":{"x":{"inputPerMillionUsd":1,"outputPerMillionUsd":"2"}}}',
  });
  expect(formatDecimal(inline.priceTable.proxyPerGbUsd)).toBe("7.5");
  expect(formatDecimal(inline.priceTable.models.get("x")!.inputPerMillionUsd)).toBe("1");
  expect(inline.priceTable.models.has("svc-max")).toBe(true);
  const file = join(mkdtempSync(join(tmpdir(), "billing-config-")), "prices.json");
  writeFileSync(file, JSON.stringify({ browserPerHourUsd: "0.12" }));
  expect(formatDecimal(loadBillingConfig({ PRICE_TABLE: file }).priceTable.browserPerHourUsd)).toBe("0.12");
});

test.each([
  ["PRICE_TABLE", "{not json"],
  ["PRICE_TABLE", '{"ownKeyFactor":"-0.5"}'],
  ["PRICE_TABLE", '{"fallbackModel":"nope"}'],
  ["DEFAULT_MAX_COST_USD", "0"],
  ["DEFAULT_MAX_COST_USD", "ten"],
  ["PROJECT_CREDITS", '{"p":"-1"}'],
])("a bad %s (%p) is a ConfigError naming the variable", (name, value) => {
  expect(() => loadBillingConfig({ [name]: value })).toThrow(ConfigError);
  expect(() => loadBillingConfig({ [name]: value })).toThrow(name);
});
