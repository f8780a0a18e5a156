import type { billing } from "@bas/proto";
import type { PromiseClient } from "@bas/service-kit";

/** Refuses new work when the project has no credit left (billing answers `insufficient_credit` → 402). */
export type CreditCheck = (projectId: string, sessionId?: string) => Promise<void>;

/**
 * Asks billing before any work is created. Without a billing service configured (a gateway run on its own) there is
 * no credit to enforce; when billing is configured but down, the check fails (503) rather than give work away.
 */
export function createCreditCheck(
  client: PromiseClient<InstanceType<typeof billing.BillingClient>> | undefined,
): CreditCheck {
  if (!client) return async () => {};
  return async (projectId, sessionId) => {
    await client.requireCredit({ projectId, sessionId });
  };
}
