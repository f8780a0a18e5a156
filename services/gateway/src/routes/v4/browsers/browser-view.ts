import type { browserPool } from "@bas/proto";

const iso = (date: Date | undefined) => (date ?? new Date(0)).toISOString();
const decimal = (value: string | undefined) => value || "0";

/** The contract's BrowserSessionView of a browser, every field present. */
export function toBrowserSessionView(b: browserPool.Browser) {
  return {
    id: b.id,
    status: b.status === "stopped" ? "stopped" : "active",
    liveUrl: b.liveUrl ?? null,
    cdpUrl: b.cdpUrl || null,
    timeoutAt: iso(b.timeoutAt),
    startedAt: iso(b.startedAt),
    finishedAt: b.finishedAt ? b.finishedAt.toISOString() : null,
    proxyUsedMb: decimal(b.proxyUsedMb),
    proxyCost: decimal(b.proxyCost),
    browserCost: decimal(b.browserCost),
    agentSessionId: b.agentSessionId ?? null,
    recordingUrl: b.recordingUrl ?? null,
    metadata: b.metadata ?? {},
  };
}
