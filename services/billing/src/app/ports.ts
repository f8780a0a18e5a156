import type { StoredEvent } from "@bas/event-store";
import type { LedgerEvent, LedgerType } from "../domain/events";
import type { Charge } from "../domain/pricing";

/** Where ledgers live: read one by its last event, append with an expected version. */
export interface LedgerStore {
  /** The ledger's last event and its version (0 and no event when it has none). One lookup, whatever its length. */
  last(type: LedgerType, id: string): Promise<{ event?: StoredEvent<LedgerEvent>; version: number }>;
  /** @throws ConcurrencyError when the ledger moved past `expectedVersion`. */
  append(
    type: LedgerType,
    id: string,
    events: readonly LedgerEvent[],
    expectedVersion: number,
    ids: readonly string[],
  ): Promise<{ version: number; events: StoredEvent<LedgerEvent>[] }>;
}

/** Remembers which usage ids were seen at which USAGE stream sequence, so a re-published fact is charged once. */
export interface UsageRegistry {
  /** For each id, the sequence it was first seen at (the one given, when it is new). One round trip per call. */
  claim(facts: readonly { usageId: string; sequence: number }[]): Promise<Map<string, number>>;
}

/** Per-project credit limits (lifetime spend allowed); a project without one has unlimited credit. */
export interface CreditLimits {
  get(projectId: string): Promise<string | undefined>;
  set(projectId: string, limitUsd: string | undefined): Promise<void>;
}

/** What billing counts for operators (Prometheus in production). */
export interface BillingMetrics {
  charged(projectId: string, charge: Charge): void;
  budgetExceeded(scope: LedgerType): void;
  usageSkipped(reason: "duplicate" | "invalid" | "empty"): void;
  unpricedModel(model: string): void;
}

/** What billing needs to know when a session gets a task: its project and cap (null = the default cap). */
export interface SessionCap {
  sessionId: string;
  projectId: string;
  maxCostUsd: string | null;
  /** The task the cap now applies to; absent while the session has none. */
  taskId?: string;
}
