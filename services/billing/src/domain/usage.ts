/** Which kind of usage a fact is; also the last token of its subject on the USAGE stream. */
export type UsageKind = "llm" | "proxy" | "browser";

export type UsageQuantity =
  | { kind: "llm"; model: string; inputTokens: number; outputTokens: number; ownKey: boolean }
  | { kind: "proxy"; bytes: number }
  | { kind: "browser"; milliseconds: number };

/** One usage fact as billing charges it, with its position in the USAGE stream. */
export type Usage = UsageQuantity & {
  id: string;
  /** USAGE stream sequence: charges are applied in this order, so it is also the ledgers' watermark. */
  sequence: number;
  projectId: string;
  sessionId?: string;
  runId?: string;
  browserId?: string;
  /** Browser usage: the browser's last report (it stopped). Charged even when empty: it completes its cost. */
  lastReport?: boolean;
  /** W3C trace context of the work that used it (a task's model call): its charge joins that trace. */
  traceparent?: string;
};

/** Why a usage fact cannot be charged; such a fact is reported and skipped, never retried. */
export function usageProblem(usage: Usage): string | undefined {
  if (!usage.id) return "usage has no id";
  if (!usage.projectId) return "usage has no project";
  const counts =
    usage.kind === "llm"
      ? [usage.inputTokens, usage.outputTokens]
      : usage.kind === "proxy"
        ? [usage.bytes]
        : [usage.milliseconds];
  if (counts.some((n) => !Number.isSafeInteger(n) || n < 0)) return "usage quantities must be non-negative integers";
  if (usage.kind === "llm" && !usage.model) return "llm usage has no model";
  return undefined;
}

/** A fact that counts nothing costs nothing and is not written to any ledger. */
export function isEmptyUsage(usage: UsageQuantity): boolean {
  if (usage.kind === "llm") return usage.inputTokens === 0 && usage.outputTokens === 0;
  if (usage.kind === "proxy") return usage.bytes === 0;
  return usage.milliseconds === 0;
}
