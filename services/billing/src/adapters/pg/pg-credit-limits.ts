import type { Kysely } from "kysely";
import type { CreditLimits } from "../../app/ports";
import type { BillingTables } from "./migrations";

/**
 * Credit limits in Postgres, cached for `cacheMs` so that the budget check before every model call stays cheap; a
 * change made through another replica is seen within that time.
 */
export function createPgCreditLimits(db: Kysely<BillingTables>, options: { cacheMs?: number } = {}): CreditLimits {
  const cacheMs = options.cacheMs ?? 5_000;
  const cache = new Map<string, { limit: string | undefined; at: number }>();
  return {
    async get(projectId) {
      const hit = cache.get(projectId);
      if (hit && Date.now() - hit.at < cacheMs) return hit.limit;
      const row = await db
        .selectFrom("billing_credit_limits")
        .select("limit_usd")
        .where("project_id", "=", projectId)
        .executeTakeFirst();
      const limit = row?.limit_usd === undefined ? undefined : String(row.limit_usd);
      if (cache.size > 10_000) cache.clear();
      cache.set(projectId, { limit, at: Date.now() });
      return limit;
    },
    async set(projectId, limitUsd) {
      if (limitUsd === undefined) {
        await db.deleteFrom("billing_credit_limits").where("project_id", "=", projectId).execute();
      } else {
        await db
          .insertInto("billing_credit_limits")
          .values({ project_id: projectId, limit_usd: limitUsd })
          .onConflict((oc) => oc.column("project_id").doUpdateSet({ limit_usd: limitUsd, updated_at: new Date() }))
          .execute();
      }
      cache.delete(projectId);
    },
  };
}
