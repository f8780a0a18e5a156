import type { browserPool } from "@bas/proto";
import { recordingAvailable } from "../../../domain/recording-available";

const iso = (date: Date | undefined) => (date ?? new Date(0)).toISOString();
const decimal = (value: string | undefined) => value || "0";

/** The contract's BrowserSessionView of a browser, every field present; `sign` presigns the recording's blob. */
export function toBrowserSessionView(b: browserPool.Browser, sign: (ref: string) => string) {
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
    recordingUrl: b.recordingRef ? sign(b.recordingRef) : null,
    recordingAvailable: recordingAvailable({ ...b, recorded: Boolean(b.settings?.record) }),
    metadata: b.metadata ?? {},
  };
}
