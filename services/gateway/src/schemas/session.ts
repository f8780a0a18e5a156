import { z } from "zod";
import { DateTime } from "./common";
import { DecimalString } from "./decimal";
import { ProxyCountryCode, SessionStatus, ThinkingLevel } from "./enums";

const nullable = <T extends z.ZodType>(schema: T, description: string) => schema.nullable().describe(description);

/** `SessionResponse` of the v3 spec, field for field. */
export function sessionResponse(model: z.ZodType) {
  return z
    .object({
      id: z.string().meta({ format: "uuid" }),
      status: SessionStatus,
      model,
      thinkingLevel: nullable(ThinkingLevel, "Configured reasoning depth; null when provider defaults are used."),
      title: nullable(z.string(), "Short title of the task; available after the task starts running."),
      output: z
        .unknown()
        .describe("The agent's final output (free text, schema-conforming data, or {text, code, output?})."),
      outputSchema: nullable(z.record(z.string(), z.unknown()), "The JSON Schema requested for structured output."),
      stepCount: z.int().default(0),
      lastStepSummary: nullable(z.string(), "Summary of the latest step."),
      isTaskSuccessful: nullable(z.boolean(), "true: goal achieved; false: failed or gave up; null: running or none."),
      liveUrl: nullable(z.string(), "URL to view the live browser."),
      recordingUrls: z.array(z.string()).default([]).describe("Recording URLs; only on the single-session read."),
      profileId: nullable(z.string().meta({ format: "uuid" }), "Browser profile loaded in the session."),
      workspaceId: nullable(z.string().meta({ format: "uuid" }), "Workspace attached to the session."),
      proxyCountryCode: nullable(ProxyCountryCode, "Proxy country; null when no proxy."),
      browserScreenWidth: nullable(z.int(), "Custom width; null means default."),
      browserScreenHeight: nullable(z.int(), "Custom height; null means default."),
      maxCostUsd: nullable(DecimalString, "Cost cap in USD."),
      totalInputTokens: z.int().default(0),
      totalOutputTokens: z.int().default(0),
      proxyUsedMb: DecimalString.default("0"),
      llmCostUsd: DecimalString.default("0"),
      proxyCostUsd: DecimalString.default("0"),
      browserCostUsd: DecimalString.default("0"),
      totalCostUsd: DecimalString.default("0"),
      screenshotUrl: nullable(z.string(), "Presigned URL of the latest screenshot (5 minutes); single read only."),
      inboxEmail: nullable(z.string(), "Temporary mailbox address, when the mailbox option was enabled."),
      agentmailEmail: nullable(z.string(), "The same address, under the name the hosted service's clients read."),
      integrationsUsed: z.array(z.string()).default([]),
      createdAt: DateTime,
      updatedAt: DateTime,
    })
    .meta({ id: "SessionResponse" });
}

export function sessionListResponse(session: z.ZodType) {
  return z
    .object({
      sessions: z.array(session),
      total: z.int(),
      page: z.int(),
      pageSize: z.int(),
    })
    .meta({ id: "SessionListResponse" });
}

export const MessageResponse = z
  .object({
    id: z.string(),
    sessionId: z.string().meta({ format: "uuid" }),
    role: z.enum(["human", "ai"]),
    data: z.string(),
    type: z.string().describe("user_message, assistant_message, browser_action, browser_action_result, ..."),
    summary: z.string().default("").describe('One line, e.g. "Navigating to example.com"; "" when there is none.'),
    screenshotUrl: z.string().nullable().describe("Presigned URL of the step's screenshot (5 minutes), or null."),
    hidden: z.boolean(),
    createdAt: DateTime,
  })
  .meta({ id: "MessageResponse" });

export const MessageListResponse = z
  .object({ messages: z.array(MessageResponse), hasMore: z.boolean() })
  .meta({ id: "MessageListResponse" });
