import type { sessions } from "@bas/proto";

/** Turns a blob reference into a presigned URL. */
export type SignRef = (ref: string) => string;

const orNull = <T>(value: T | undefined | null): T | null => (value === undefined ? null : value);
const decimal = (value: string | undefined) => (value ? value : "0");
const iso = (date: Date | undefined) => (date ?? new Date(0)).toISOString();

/**
 * The v3 `SessionResponse` of a session, every field present in the spec's order. A list passes no signer:
 * lists never carry presigned URLs (`screenshotUrl` null, `recordingUrls` []).
 */
export function toSessionResponse(s: sessions.Session, sign?: SignRef) {
  return {
    id: s.id,
    status: s.status,
    model: s.model,
    thinkingLevel: orNull(s.thinkingLevel),
    title: orNull(s.title),
    output: orNull(s.output),
    outputSchema: orNull(s.outputSchema),
    stepCount: s.stepCount ?? 0,
    lastStepSummary: orNull(s.lastStepSummary),
    isTaskSuccessful: orNull(s.isTaskSuccessful),
    liveUrl: orNull(s.liveUrl),
    recordingUrls: sign ? (s.recordingRefs ?? []).map(sign) : [],
    profileId: orNull(s.profileId),
    workspaceId: orNull(s.workspaceId),
    proxyCountryCode: orNull(s.proxyCountryCode),
    browserScreenWidth: orNull(s.browserScreenWidth),
    browserScreenHeight: orNull(s.browserScreenHeight),
    maxCostUsd: orNull(s.maxCostUsd),
    totalInputTokens: s.totalInputTokens ?? 0,
    totalOutputTokens: s.totalOutputTokens ?? 0,
    proxyUsedMb: decimal(s.proxyUsedMb),
    llmCostUsd: decimal(s.llmCostUsd),
    proxyCostUsd: decimal(s.proxyCostUsd),
    browserCostUsd: decimal(s.browserCostUsd),
    totalCostUsd: decimal(s.totalCostUsd),
    screenshotUrl: sign && s.screenshotRef ? sign(s.screenshotRef) : null,
    inboxEmail: orNull(s.inboxEmail),
    agentmailEmail: orNull(s.inboxEmail),
    integrationsUsed: s.integrationsUsed ?? [],
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt ?? s.createdAt),
  };
}

export function toMessageResponse(m: sessions.Message, sign: SignRef) {
  return {
    id: m.id,
    sessionId: m.sessionId,
    role: m.role,
    data: m.data,
    type: m.type,
    // The contract's MessageResponse.summary is a string, never null: a message without one (the task itself) has "".
    summary: m.summary ?? "",
    screenshotUrl: m.screenshotRef ? sign(m.screenshotRef) : null,
    hidden: m.hidden,
    createdAt: iso(m.createdAt),
  };
}
