import { readFileSync } from "node:fs";
import { commonEnv, ConfigError, envPort, loadConfig } from "@bas/service-kit";
import { z } from "zod";
import { parseDecimal } from "./domain/money";
import { buildPriceTable, type PriceTable, priceTableSchema } from "./domain/price-table";

/** A JSON value given inline or as a path to a JSON file. */
function jsonOrPath(text: string): unknown {
  const trimmed = text.trim();
  return JSON.parse(trimmed.startsWith("{") || trimmed.startsWith("[") ? trimmed : readFileSync(trimmed, "utf8"));
}

const jsonSetting = <T extends z.ZodType>(schema: T) =>
  z
    .string()
    .optional()
    .transform((text, ctx): z.infer<T> | undefined => {
      if (!text?.trim()) return undefined;
      let raw: unknown;
      try {
        raw = jsonOrPath(text);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: `not JSON nor a readable JSON file: ${(err as Error).message}` });
        return z.NEVER;
      }
      const parsed = schema.safeParse(raw);
      if (!parsed.success) {
        ctx.addIssue({
          code: "custom",
          message: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
        });
        return z.NEVER;
      }
      return parsed.data;
    });

const positiveDecimal = z.string().refine((v) => parseDecimal(v)?.greaterThan(0) ?? false, "a positive decimal");
const nonNegativeDecimal = z
  .union([z.string(), z.number()])
  .transform(String)
  .refine((v) => parseDecimal(v)?.isNegative() === false, "a non-negative decimal");

export const billingEnv = {
  ...commonEnv,
  GRPC_PORT: envPort(50054),
  METRICS_PORT: envPort(9464),
  /** JSON (or a path to JSON) overlaying the default price table; see `priceTableSchema`. */
  PRICE_TABLE: jsonSetting(priceTableSchema),
  /** The cost cap of a session or run created without `maxCostUsd`. */
  DEFAULT_MAX_COST_USD: positiveDecimal.default("10"),
  /** JSON (or a path) `{"<projectId>": "<credit limit USD>"}`, written to the credit table at start. */
  PROJECT_CREDITS: jsonSetting(z.record(z.string().min(1), nonNegativeDecimal)),
  /** Model catalog (path to JSON), for mapping model aliases to their tier's price. */
  MODEL_CATALOG: z.string().optional(),
  /** How long an unacknowledged usage fact waits before redelivery (a crashed billing's fact is retried then). */
  USAGE_ACK_WAIT_MS: z.coerce.number().int().min(1_000).default(30_000),
  /** Days a usage id is remembered, to recognise a fact re-published under the same id. */
  USAGE_ID_RETENTION_DAYS: z.coerce.number().int().min(1).default(30),
};

export type BillingConfig = Omit<ReturnType<typeof loadBillingEnv>, "PRICE_TABLE"> & { priceTable: PriceTable };

function loadBillingEnv(env: NodeJS.ProcessEnv) {
  return loadConfig(billingEnv, env);
}

/** The billing service's configuration from the environment (names the bad variable on failure). */
export function loadBillingConfig(env: NodeJS.ProcessEnv = process.env): BillingConfig {
  const { PRICE_TABLE, ...rest } = loadBillingEnv(env);
  try {
    return { ...rest, priceTable: buildPriceTable(PRICE_TABLE ?? {}) };
  } catch (err) {
    throw ConfigError.of("PRICE_TABLE", (err as Error).message);
  }
}
