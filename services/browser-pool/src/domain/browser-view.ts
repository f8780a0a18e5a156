import type { BrowserState } from "./decider";
import type { BrowserSettings } from "./browser-settings";
import { liveUrlFor } from "./cdp-route";

/** A browser as callers see it (the contract's BrowserSessionView, before serialisation). */
export interface BrowserView {
  id: string;
  projectId: string;
  /** A browser still launching is already `active`: it was accepted and its CDP URL is valid. */
  status: "active" | "stopped";
  cdpUrl: string;
  liveUrl: string | null;
  timeoutAt: Date;
  startedAt: Date;
  finishedAt: Date | null;
  proxyUsedMb: string;
  proxyCost: string;
  browserCost: string;
  agentSessionId: string | null;
  /** Blob reference of the recording once it is stored (the gateway signs it into `recordingUrl`). */
  recordingRef: string | null;
  metadata: Record<string, string>;
  stopReason: string | null;
  settings: BrowserSettings;
}

export interface BrowserCosts {
  proxyUsedMb: string;
  proxyCost: string;
  browserCost: string;
}

export const ZERO_COSTS: BrowserCosts = { proxyUsedMb: "0", proxyCost: "0", browserCost: "0" };

/** The view of a browser from its aggregate state; costs come from billing's totals when known. */
export function viewFromState(id: string, state: BrowserState, costs: BrowserCosts = ZERO_COSTS): BrowserView {
  if (state.status === "none") throw new Error(`browser ${id} has no events`);
  return {
    id,
    projectId: state.projectId,
    status: state.status === "stopped" ? "stopped" : "active",
    cdpUrl: state.cdpUrl,
    liveUrl: liveUrlFor(state.cdpUrl) ?? null,
    timeoutAt: new Date(state.timeoutAt),
    startedAt: new Date(state.status === "requested" ? state.requestedAt : (state.startedAt ?? state.requestedAt)),
    finishedAt: state.status === "stopped" ? new Date(state.finishedAt) : null,
    ...costs,
    agentSessionId: state.sessionId,
    recordingRef: state.status === "stopped" ? state.recordingRef : null,
    metadata: state.metadata,
    stopReason: state.status === "stopped" ? state.reason : null,
    settings: state.settings,
  };
}
