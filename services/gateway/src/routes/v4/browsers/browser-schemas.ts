import { z } from "zod";
import { DateTime, queryBool, queryInt, Uuid } from "../../../schemas/common";
import { AllowedDomains } from "../../../schemas/allowed-domains";
import { CustomProxy } from "../../../schemas/custom-proxy";
import { ProxyCountryCode } from "../../../schemas/enums";

const SCREEN = { width: { min: 320, max: 7680 }, height: { min: 240, max: 4320 } };
export const MAX_METADATA_ENTRIES = 10;
export const TIMEOUT_MINUTES = { min: 1, max: 240, default: 60 };

/** Body of `POST /api/v{3,4}/browsers`. Unknown fields are ignored; every known one is checked. */
export const CreateBrowserRequest = z
  .object({
    proxyCountryCode: ProxyCountryCode.nullable().default("us").describe("Proxy country; null for no proxy."),
    profileId: Uuid.nullable().optional().describe("Browser profile to load."),
    timeout: z
      .int()
      .min(TIMEOUT_MINUTES.min)
      .max(TIMEOUT_MINUTES.max)
      .default(TIMEOUT_MINUTES.default)
      .describe("Minutes until the browser stops by itself. Maximum session timeout is 4 hours (240 minutes)."),
    browserScreenWidth: z.int().min(SCREEN.width.min).max(SCREEN.width.max).nullable().optional(),
    browserScreenHeight: z.int().min(SCREEN.height.min).max(SCREEN.height.max).nullable().optional(),
    enableRecording: z.boolean().default(false),
    customProxy: CustomProxy.nullable().optional().describe("Your own proxy; overrides proxyCountryCode."),
    allowedDomains: AllowedDomains,
    metadata: z
      .record(z.string(), z.string())
      .superRefine((metadata, ctx) => {
        if (Object.keys(metadata).length > MAX_METADATA_ENTRIES)
          ctx.addIssue({
            code: "custom",
            message: `metadata should have at most ${MAX_METADATA_ENTRIES} entries`,
            params: { type: "too_long" },
          });
      })
      .nullable()
      .optional()
      .describe(`Up to ${MAX_METADATA_ENTRIES} string key/value pairs, returned as given.`),
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
  .meta({ id: "CreateBrowserRequest" });

/** Body of `PATCH /api/v{3,4}/browsers/{id}`: stopping is the only action. */
export const UpdateBrowserRequest = z
  .object({
    // A string first, so a missing action is reported as `missing` and a wrong one as `literal_error`.
    action: z
      .string()
      .meta({ enum: ["stop"] })
      .pipe(z.enum(["stop"]))
      .describe("`stop`: stop the browser; stopping twice is not an error."),
  })
  .meta({ id: "UpdateBrowserRequest" });

export const BrowserListQuery = z.object({
  pageNumber: queryInt({ min: 1, default: 1, description: "Page number, 1-indexed." }),
  pageSize: queryInt({ min: 1, max: 100, default: 10, description: "Browsers per page." }),
  filterBy: z.enum(["active", "stopped"]).optional().describe("Only browsers with this status."),
  agentSessionId: Uuid.optional().describe("Only the browsers of this session (v3) or conversation (v4)."),
});

export const BrowserSessionView = z
  .object({
    id: z.string().meta({ format: "uuid" }),
    status: z.enum(["active", "stopped"]),
    liveUrl: z.string().nullable(),
    cdpUrl: z
      .string()
      .nullable()
      .describe("CDP WebSocket URL (puppeteer browserWSEndpoint); http form answers /json/version."),
    timeoutAt: DateTime,
    startedAt: DateTime,
    finishedAt: DateTime.nullable(),
    proxyUsedMb: z.string().describe("Decimal string."),
    proxyCost: z.string().describe("Decimal string, USD."),
    browserCost: z.string().describe("Decimal string, USD."),
    agentSessionId: z.string().nullable(),
    recordingUrl: z.string().nullable(),
    recordingAvailable: z
      .boolean()
      .describe(
        "False once no recording can appear: it was not asked for, or the browser stopped 10 minutes ago without " +
          "one. A client polling for recordingUrl stops then.",
      ),
    metadata: z.record(z.string(), z.string()),
  })
  .meta({ id: "BrowserSessionView" });

export const BrowserSessionList = z
  .object({
    items: z.array(BrowserSessionView),
    totalItems: z.int(),
    pageNumber: z.int(),
    pageSize: z.int(),
  })
  .meta({ id: "BrowserSessionListResponse" });

export const BrowserDownloadsQuery = z.object({
  limit: queryInt({ min: 1, max: 100, default: 50, description: "Files per page." }),
  cursor: z.string().max(100).optional().describe("`nextCursor` of the page before."),
  includeUrls: queryBool({ default: false, description: "Give each file a presigned download URL (valid 5 minutes)." }),
});

export const BrowserDownloadFile = z
  .object({
    path: z.string().describe("The file's name as the page offered it."),
    size: z.int().describe("Bytes."),
    lastModified: DateTime.describe("When the download finished."),
    url: z.string().nullable().optional().describe("Presigned URL; only with `includeUrls=true`."),
  })
  .meta({ id: "BrowserDownloadFile" });

export const BrowserDownloadList = z
  .object({
    files: z.array(BrowserDownloadFile),
    nextCursor: z.string().nullable(),
    hasMore: z.boolean(),
  })
  .meta({ id: "BrowserDownloadListResponse" });
