import { z } from "zod";
import { Uuid } from "../../../schemas/common";
import { DecimalString } from "../../../schemas/decimal";

export const PlanInfo = z
  .object({
    planName: z.string(),
    subscriptionStatus: z.string().nullable(),
    subscriptionId: z.string().nullable(),
    subscriptionCurrentPeriodEnd: z.string().nullable(),
    subscriptionCanceledAt: z.string().nullable(),
  })
  .meta({ id: "PlanInfo" });

/** The hosted service's AccountView, answered from the project's credit; our own figures exactly, beside it. */
export const AccountView = z
  .object({
    name: z.string().nullable().describe("The project's name."),
    totalCreditsBalanceUsd: z
      .number()
      .describe(
        "What the project may still spend: its credit limit less what it was charged. A project without a limit " +
          `shows ${Number.MAX_SAFE_INTEGER}.`,
      ),
    monthlyCreditsBalanceUsd: z.number().describe("Always 0: there are no monthly subscription credits."),
    additionalCreditsBalanceUsd: z.number().describe("The same as totalCreditsBalanceUsd."),
    rateLimit: z.int().describe("Requests the project may make per RATE_LIMIT_WINDOW_SECONDS; 0 = no limit."),
    planInfo: PlanInfo,
    isFreeTier: z.boolean(),
    projectId: Uuid,
    tracingDisabled: z.boolean().describe("Always true: nothing of a run is sent to a third-party tracing service."),
    creditLimitUsd: DecimalString.nullable().describe("The project's credit limit; null = unlimited."),
    spentUsd: DecimalString.describe("What the project has been charged so far."),
  })
  .meta({ id: "AccountView" });
