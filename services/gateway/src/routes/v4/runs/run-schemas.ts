import type { ModelCatalog } from "@bas/models";
import { z } from "zod";
import { DateTime, queryInt, Uuid } from "../../../schemas/common";
import { DecimalString, positiveDecimalInput } from "../../../schemas/decimal";
import { AllowedDomains, HostPattern } from "../../../schemas/allowed-domains";
import { CustomProxy } from "../../../schemas/custom-proxy";
import { ProxyCountryCode, ThinkingLevel } from "../../../schemas/enums";
import { v3Schemas } from "../../../schemas/v3-schemas";

export const RUN_STATUSES = ["queued", "dispatching", "running", "completed", "failed", "cancelled"] as const;
/** A run shown in one of these has ended and never changes again. */
export const ENDED_RUN_STATUSES: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);
export const RunStatusEnum = z.enum(RUN_STATUSES).meta({ id: "RunStatus" });

/** Browser settings of a run; they apply when the run's conversation gets a new browser. */
const RunBrowserSettings = z
  .object({
    profileId: Uuid.nullable().optional(),
    proxyCountryCode: ProxyCountryCode.nullable().default("us").describe("Proxy country; null for no proxy."),
    screenWidth: z.int().min(320).max(6144).nullable().optional(),
    screenHeight: z.int().min(320).max(3456).nullable().optional(),
    record: z.boolean().nullable().optional().describe("Record the browser (off unless true)."),
    customProxy: CustomProxy.nullable()
      .optional()
      .describe("Your own proxy; overrides proxyCountryCode. Not kept for follow-up runs: pass it on each run."),
  })
  .superRefine((b, ctx) => {
    if ((b.screenWidth == null) !== (b.screenHeight == null))
      ctx.addIssue({
        code: "custom",
        path: [b.screenWidth == null ? "screenWidth" : "screenHeight"],
        message: "screenWidth and screenHeight must be given together",
        params: { type: "missing" },
      });
  })
  .meta({ id: "RunBrowserSettings" });

/** A host a secret may be typed on: `example.com` (and its subdomains) or `*.example.com` (only the subdomains). */
const SecretHost = HostPattern;

const SecretBinding = z
  .strictObject({
    alias: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/, {
        message: "1-64 letters, digits, _ . or -, not starting with a digit",
      })
      .describe("What the agent writes to type it: <secret>alias</secret>. It never sees the value."),
    source: z
      .strictObject({ type: z.literal("inline"), value: z.string().min(1).max(10_000) })
      .describe("Where the value comes from: given inline (kept encrypted, never in a prompt, message or event)."),
    allowedDomains: z
      .array(SecretHost)
      .min(1)
      .max(20)
      .describe("The hosts it may be typed on; a page anywhere else does not get it."),
  })
  .meta({ id: "SecretBinding" });

/** What the model of a run accepts besides its name: a key it does not know is refused, never dropped. */
const ModelParams = z
  .strictObject({
    thinkingLevel: ThinkingLevel.nullable().optional().describe("How hard the model thinks (models that reason)."),
    temperature: z
      .number()
      .min(0)
      .max(2)
      .nullable()
      .optional()
      .describe("Sampling temperature (models that do not reason)."),
    topP: z.number().gt(0).max(1).nullable().optional().describe("Nucleus sampling (models that do not reason)."),
    maxOutputTokens: z
      .int()
      .min(1)
      .max(1_000_000)
      .nullable()
      .optional()
      .describe("A cap on each model call's answer, in tokens."),
  })
  .describe("Passed to the model's provider; a key the model's route does not take is refused (422).")
  .meta({ id: "ModelParams" });

const RunJudgeSettings = z
  .strictObject({
    context: z
      .string()
      .max(10_000)
      .nullable()
      .optional()
      .describe("What the judge should know besides the task (what counts as success, say)."),
  })
  .describe(
    "Judge the run: when the agent is done, the run's model gives a verdict on what it did, from its steps. The " +
      "verdict is the run's judgement once it is completed, and the judge's tokens are in the run's costs (send {} " +
      "for the defaults).",
  )
  .meta({ id: "RunJudgeSettings" });

function build(models: ModelCatalog) {
  const { model, defaultModel } = v3Schemas(models);
  const RunCreateRequest = z
    .strictObject({
      task: z.string().min(1).max(100_000).describe("What the agent should do."),
      model: model.default(defaultModel),
      modelParams: ModelParams.nullable().optional(),
      sessionId: Uuid.nullable().optional().describe("A follow-up turn of this conversation; absent: a new one."),
      workspaceId: Uuid.nullable().optional(),
      browserSettings: RunBrowserSettings.nullable().optional(),
      allowedDomains: AllowedDomains.describe(
        "The only hosts the conversation's browser may reach (navigation, frames and every request): `example.com` " +
          "covers it and its subdomains, `*.example.com` only the subdomains, an IP address only itself. Set when the " +
          "conversation is created, like browserSettings: a follow-up run (with sessionId) cannot change it.",
      ),
      maxCostUsd: positiveDecimalInput("The run's cost cap in USD (number or decimal string, > 0).")
        .nullable()
        .optional(),
      secretBindings: z
        .array(SecretBinding)
        .max(20)
        .nullable()
        .optional()
        .describe("Secrets the agent may type by alias, each only on its allowed hosts."),
      attachedFileIds: z
        .array(Uuid)
        .max(20)
        .nullable()
        .optional()
        .describe(
          "Files of the run's workspace to point the agent to: the ids POST /api/v4/workspaces/{id}/files/upload " +
            "gave, once their files are uploaded. The agent is told their paths and reads them with its file tools.",
        ),
      judge: RunJudgeSettings.nullable().optional(),
      agentmail: z
        .boolean()
        .default(false)
        .describe(
          "Give a new conversation a temporary email address: its agent is told it and can read and wait for the " +
            "mail that arrives (a sign-up's code, say). The session's agentmailEmail shows it.",
        ),
    })
    .superRefine((body, ctx) => {
      const seen = new Set<string>();
      body.secretBindings?.forEach((b, i) => {
        if (seen.has(b.alias)) {
          ctx.addIssue({
            code: "custom",
            path: ["secretBindings", i, "alias"],
            message: `alias '${b.alias}' is bound twice`,
          });
        }
        seen.add(b.alias);
      });
    })
    .meta({ id: "RunCreateRequest" });
  const RunCreateResponse = z
    .object({
      id: Uuid,
      status: RunStatusEnum,
      model: z.string(),
      sessionId: Uuid,
      workspaceId: Uuid,
      eventsUrl: z.string(),
      missingFileIds: z
        .array(Uuid)
        .describe("Attached ids that name no uploaded file of the run's workspace: the run goes on without them."),
    })
    .meta({ id: "RunCreateResponse" });
  return { RunCreateRequest, RunCreateResponse };
}

const cache = new WeakMap<ModelCatalog, ReturnType<typeof build>>();

/** The run schemas that depend on the configured model catalog, built once per catalog. */
export function runSchemas(models: ModelCatalog): ReturnType<typeof build> {
  let schemas = cache.get(models);
  if (!schemas) {
    schemas = build(models);
    cache.set(models, schemas);
  }
  return schemas;
}

export const RunSummary = z
  .object({
    id: Uuid,
    task: z.string(),
    title: z.string().nullable(),
    model: z.string(),
    contextLimit: z.int(),
    status: RunStatusEnum,
    result: z.string().nullable().describe("The agent's answer, once the run has completed."),
    error: z.string().nullable().describe("Why the run failed."),
    sessionId: Uuid,
    workspaceId: Uuid.nullable(),
    attachedFileIds: z.array(Uuid).nullable(),
    judgement: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe(
        "For a run created with judge that completed: {verdict, reasoning, failureReason, impossibleTask, " +
          "reachedCaptcha}, or {verdict: null, error} when no verdict could be had. Null otherwise.",
      ),
    totalInputTokens: z.int(),
    totalOutputTokens: z.int(),
    totalCostUsd: DecimalString.describe("The run's model cost; final once the status is terminal."),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .meta({ id: "RunSummary" });

export const RunStatusResponse = z.object({ status: RunStatusEnum }).meta({ id: "RunStatusResponse" });

export const RunAttachment = z
  .object({
    id: Uuid.describe("The id its upload was given, as in the run's attachedFileIds."),
    name: z.string().describe('Filename shown to the user, e.g. "data.csv".'),
    contentType: z.string(),
    sizeBytes: z.int(),
    status: z
      .enum(["pending", "uploaded"])
      .describe('"pending" | "uploaded". Always "uploaded" here: a run can only be pointed to uploaded files.'),
  })
  .meta({ id: "RunAttachment" });

export const RunAttachmentsResponse = z
  .object({ attachments: z.array(RunAttachment) })
  .meta({ id: "RunAttachmentsResponse" });

export const RunListResponse = z
  .object({ runs: z.array(RunSummary), nextCursor: z.string().nullable(), hasMore: z.boolean() })
  .meta({ id: "RunListResponse" });

export const RunListQuery = z.object({
  limit: queryInt({ min: 1, max: 100, default: 50, description: "Runs per page (at most 100)." }),
  cursor: z.string().max(500).optional().describe("Keyset cursor from a prior response."),
  sessionId: Uuid.optional().describe("Only this conversation's runs."),
});

export const RunEvent = z
  .object({
    runId: Uuid,
    id: z.int().describe("Increasing within the run (gaps allowed)."),
    ts: DateTime,
    type: z
      .string()
      .describe("run.created, run.dispatching, run.started, run.step, run.completed, run.failed, run.cancelled"),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "RunEvent" });

export const RunEventsResponse = z
  .object({ events: z.array(RunEvent), nextAfter: z.int().nullable(), hasMore: z.boolean() })
  .meta({ id: "RunEventsResponse" });

export const RunEventsQuery = z.object({
  after: queryInt({ min: 0, max: Number.MAX_SAFE_INTEGER, default: 0, description: "Events after this id." }),
  limit: queryInt({ min: 1, max: 1000, default: 200, description: "Events per page (at most 1000)." }),
});

export const SessionInfo = z
  .object({
    sessionId: Uuid,
    workspaceId: Uuid.nullable(),
    latestRunId: Uuid,
    task: z.string(),
    title: z.string().nullable(),
    status: RunStatusEnum,
    createdAt: DateTime,
    updatedAt: DateTime,
    agentmailEmail: z.string().nullable().describe("Its mailbox address, when it was created with agentmail."),
  })
  .meta({ id: "SessionInfo" });

export const SessionInfoList = z
  .object({ sessions: z.array(SessionInfo), nextCursor: z.string().nullable(), hasMore: z.boolean() })
  .meta({ id: "V4SessionListResponse" });

export const SessionListQuery = z.object({
  limit: queryInt({ min: 1, max: 100, default: 20, description: "Sessions per page (at most 100)." }),
  cursor: z.string().max(500).optional().describe("Keyset cursor from a prior response."),
});
