import type { sessions } from "@bas/proto";
import type { MessageRecord, SessionRecord } from "../../app/ports";

/** The session as the gateway receives it: nulls become absent fields, URLs stay unsigned references. */
export function toProtoSession({ session: s, status, costs }: SessionRecord): sessions.Session {
  return {
    id: s.id,
    projectId: s.settings.projectId,
    status,
    model: s.settings.model,
    thinkingLevel: s.settings.thinkingLevel ?? undefined,
    title: s.title ?? undefined,
    output: s.output ?? undefined,
    outputSchema: s.outputSchema ?? undefined,
    stepCount: s.stepCount,
    lastStepSummary: s.lastStepSummary ?? undefined,
    isTaskSuccessful: s.isTaskSuccessful ?? undefined,
    liveUrl: s.settings.liveUrl,
    recordingUrls: [],
    profileId: s.settings.profileId ?? undefined,
    workspaceId: s.settings.workspaceId ?? undefined,
    proxyCountryCode: s.settings.proxyCountryCode ?? undefined,
    browserScreenWidth: s.settings.screenWidth ?? undefined,
    browserScreenHeight: s.settings.screenHeight ?? undefined,
    maxCostUsd: s.settings.maxCostUsd ?? undefined,
    totalInputTokens: s.totalInputTokens,
    totalOutputTokens: s.totalOutputTokens,
    ...costs,
    screenshotUrl: undefined,
    inboxEmail: s.settings.inboxEmail ?? undefined,
    integrationsUsed: [],
    createdAt: new Date(s.createdAt),
    updatedAt: new Date(s.updatedAt),
    keepAlive: s.keepAlive,
    codeMode: s.codeMode,
    screenshotRef: s.screenshotRef ?? undefined,
    recordingRefs: s.recordingRefs,
  };
}

export function toProtoMessage(m: MessageRecord): sessions.Message {
  return {
    id: m.id,
    sessionId: m.sessionId,
    role: m.role,
    data: m.data,
    type: m.type,
    summary: m.summary ?? undefined,
    screenshotUrl: undefined,
    hidden: m.hidden,
    createdAt: m.createdAt,
    screenshotRef: m.screenshotRef ?? undefined,
  };
}
