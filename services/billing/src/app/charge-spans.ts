import { openSpan } from "@bas/service-kit/tracing";
import type { Usage } from "../domain/usage";
import type { ChargeOutcome } from "./charge-usage";

type ChargeBatch = (usages: readonly Usage[]) => Promise<ChargeOutcome[]>;

/**
 * Charges a batch with a `billing.charge` span per usage fact that came with a trace context, in that trace: a
 * task's trace then shows what each of its model calls cost. Facts are charged together, so each span covers the
 * whole batch; a batch that fails (and is tried again) leaves failed spans.
 */
export function withChargeSpans(charge: ChargeBatch): ChargeBatch {
  return async (usages) => {
    const spans = usages.map((usage) =>
      usage.traceparent
        ? openSpan("billing.charge", {
            traceparent: usage.traceparent,
            attributes: { "bas.usage.id": usage.id, "bas.usage.kind": usage.kind, "bas.project_id": usage.projectId },
          })
        : undefined,
    );
    let outcomes: ChargeOutcome[];
    try {
      outcomes = await charge(usages);
    } catch (err) {
      for (const span of spans) span?.fail(err);
      throw err;
    }
    for (const [i, outcome] of outcomes.entries()) {
      spans[i]?.end(
        outcome.status === "charged"
          ? { "bas.charge.outcome": "charged", "bas.charge.amount_usd": outcome.amountUsd.toString() }
          : { "bas.charge.outcome": outcome.reason },
      );
    }
    return outcomes;
  };
}
