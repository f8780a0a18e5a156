import { z } from "zod";
import { AllowedDomains } from "./allowed-domains";
import { Uuid } from "./common";
import { positiveDecimalInput } from "./decimal";
import { ProxyCountryCode, ThinkingLevel } from "./enums";
import { MAX_JSON_CHARS, MAX_JSON_DEPTH, jsonLimitProblem } from "./json-limits";
import { jsonSchemaProblem } from "./json-schema-check";

const SCREEN = { width: { min: 320, max: 7680 }, height: { min: 240, max: 4320 } };

/** The body of `POST /api/v3/sessions`, with the model enum of the configured catalog. */
export function createSessionBody(models: z.ZodType<string>, defaultModel: string) {
  return z
    .object({
      task: z
        .string()
        .min(1)
        .max(100_000)
        .optional()
        .describe("The instruction. Without it an idle session is created."),
      model: models.default(defaultModel),
      thinkingLevel: ThinkingLevel.nullable().optional(),
      sessionId: Uuid.nullable().optional().describe("Dispatch the task to this existing idle session."),
      keepAlive: z.boolean().default(false).describe("Stay idle after the task instead of stopping."),
      maxCostUsd: positiveDecimalInput("Cost cap in USD (number or decimal string, > 0).").nullable().optional(),
      profileId: Uuid.nullable().optional(),
      workspaceId: Uuid.nullable().optional(),
      proxyCountryCode: ProxyCountryCode.nullable().default("us").describe("Proxy country; null for no proxy."),
      browserScreenWidth: z.int().min(SCREEN.width.min).max(SCREEN.width.max).nullable().optional(),
      browserScreenHeight: z.int().min(SCREEN.height.min).max(SCREEN.height.max).nullable().optional(),
      outputSchema: z
        .record(z.string(), z.unknown())
        .superRefine((schema, ctx) => {
          // Bounded first: the schema check clones and compiles it, and gRPC must be able to carry it.
          const tooBig = jsonLimitProblem(schema, "outputSchema");
          if (tooBig) {
            ctx.addIssue({ code: "custom", message: tooBig.message, params: { type: tooBig.type } });
            return;
          }
          const problem = jsonSchemaProblem(schema);
          if (problem)
            ctx.addIssue({
              code: "custom",
              message: `outputSchema is not a valid JSON Schema: ${problem}`,
              params: { type: "json_schema_invalid" },
            });
        })
        .nullable()
        .optional()
        .describe(
          `A JSON Schema the output must conform to; at most ${MAX_JSON_DEPTH} levels of nested objects and arrays ` +
            `and ${MAX_JSON_CHARS} characters as JSON.`,
        ),
      sensitiveData: z
        .record(z.string().min(1).max(200), z.string().max(10_000))
        .nullable()
        .optional()
        .describe("Secrets the agent types through <secret>key</secret> placeholders; it never sees the values."),
      enableRecording: z.boolean().default(false),
      allowedDomains: AllowedDomains,
      inbox: z.boolean().optional().describe("Provision a temporary mailbox (also accepted as `agentmail`)."),
      agentmail: z.boolean().optional().describe("Alias of `inbox`."),
      codeMode: z.boolean().default(false),
      use_own_key: z.boolean().optional().describe("Use the project's own provider key (also `useOwnKey`)."),
      useOwnKey: z.boolean().optional().describe("Alias of `use_own_key`."),
    })
    .superRefine((body, ctx) => {
      const width = body.browserScreenWidth ?? null;
      const height = body.browserScreenHeight ?? null;
      if ((width === null) !== (height === null))
        ctx.addIssue({
          code: "custom",
          path: [width === null ? "browserScreenWidth" : "browserScreenHeight"],
          message: "browserScreenWidth and browserScreenHeight must be given together",
          params: { type: "missing" },
        });
    })
    .transform(({ agentmail, inbox, use_own_key, useOwnKey, ...rest }) => ({
      ...rest,
      inbox: Boolean(inbox ?? agentmail),
      useOwnKey: Boolean(use_own_key ?? useOwnKey),
    }))
    .meta({ id: "CreateSessionRequest" });
}
