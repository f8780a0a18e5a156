import { defineRoute } from "../../../http/route";
import { AccountView } from "./account-schemas";

/** Stands for "no limit" where the hosted shape has only a number. */
const UNLIMITED = Number.MAX_SAFE_INTEGER;

export const route = defineRoute({
  method: "get",
  path: "/api/v3/billing/account",
  auth: "api-key",
  operationId: "getAccountBilling",
  summary: "The project's credit: what it may still spend, its limit and what it has spent",
  tags: ["Billing"],
  responses: { 200: { description: "The project's account", schema: AccountView } },
  async handler({ project, signal }, deps) {
    const [credit, found] = await Promise.all([
      deps.billing.getCredit({ projectId: project.projectId }, { signal }),
      deps.findProject(project.projectId),
    ]);
    const balance = credit.balanceUsd === undefined ? UNLIMITED : Number(credit.balanceUsd);
    return {
      body: {
        name: found?.name ?? null,
        totalCreditsBalanceUsd: balance,
        monthlyCreditsBalanceUsd: 0,
        additionalCreditsBalanceUsd: balance,
        rateLimit: deps.rateLimitRequests,
        planInfo: {
          planName: "self-hosted",
          subscriptionStatus: null,
          subscriptionId: null,
          subscriptionCurrentPeriodEnd: null,
          subscriptionCanceledAt: null,
        },
        isFreeTier: false,
        projectId: project.projectId,
        tracingDisabled: true,
        creditLimitUsd: credit.limitUsd ?? null,
        spentUsd: credit.spentUsd || "0",
      },
    };
  },
});
