import { posix } from "node:path";
import type { runs } from "@bas/proto";
import type { z } from "zod";
import type { RunAttachmentsResponse, RunSummary, SessionInfo } from "./run-schemas";

/** How much conversation the agent keeps in view, in tokens (what `contextLimit` reports). */
export const CONTEXT_LIMIT = 128_000;

const iso = (d: Date | undefined) => (d ?? new Date(0)).toISOString();

export function toRunSummary(r: runs.Run): z.input<typeof RunSummary> {
  return {
    id: r.id,
    task: r.task,
    title: r.title ?? null,
    model: r.model,
    contextLimit: CONTEXT_LIMIT,
    status: r.status as z.input<typeof RunSummary>["status"],
    result: r.result ?? null,
    error: r.error ?? null,
    sessionId: r.sessionId,
    workspaceId: r.workspaceId ?? null,
    attachedFileIds: r.attachedFileIds.length ? r.attachedFileIds : null,
    judgement: isObject(r.judgement) ? r.judgement : null,
    totalInputTokens: r.totalInputTokens,
    totalOutputTokens: r.totalOutputTokens,
    totalCostUsd: r.totalCostUsd || "0",
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
  };
}

/** A file's name is the last segment of its workspace path (`uploads/data.csv` → `data.csv`). */
export function toRunAttachments(r: runs.Run): z.input<typeof RunAttachmentsResponse> {
  return {
    attachments: r.attachments.map((a) => ({
      id: a.id,
      name: posix.basename(a.path),
      contentType: a.contentType,
      sizeBytes: a.size,
      status: "uploaded" as const,
    })),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

export function toSessionInfo(c: runs.Conversation): z.input<typeof SessionInfo> {
  return {
    sessionId: c.sessionId,
    workspaceId: c.workspaceId ?? null,
    latestRunId: c.latestRunId,
    task: c.task,
    title: c.title ?? null,
    status: c.status as z.input<typeof SessionInfo>["status"],
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
    agentmailEmail: c.inboxEmail ?? null,
  };
}
