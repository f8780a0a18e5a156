import type { ServerUnaryCall } from "@grpc/grpc-js";
import type { runs } from "@bas/proto";
import { type HandlerLog, unaryService } from "@bas/service-kit";
import type { ConversationRecord, RunRecord } from "../../app/ports";
import type { Runs } from "../../app/runs";
import type { QueuedMessage } from "../../domain/queue";
import { deadlineOfCall } from "./deadline-of-call";
import { createRunInput, limitOf, messageIdOf, projectIdOf, queueMessageInput, runIdOf, sessionIdOf } from "./requests";

function toProtoRun(r: RunRecord & { missingFileIds?: string[] }): runs.Run {
  return {
    id: r.id,
    sessionId: r.sessionId,
    task: r.task,
    title: r.title ?? undefined,
    model: r.model,
    status: r.status,
    result: r.result ?? undefined,
    error: r.error ?? undefined,
    judgement: r.judgement ?? undefined,
    attachedFileIds: r.attachedFileIds ?? [],
    attachments: r.attachments.map(({ id, path, contentType, size }) => ({ id, path, contentType, size })),
    missingFileIds: r.missingFileIds ?? [],
    workspaceId: r.workspaceId ?? undefined,
    totalInputTokens: r.inputTokens,
    totalOutputTokens: r.outputTokens,
    totalCostUsd: r.totalCostUsd,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

function toProtoMessage(sessionId: string, m: QueuedMessage): runs.QueuedMessage {
  return {
    id: m.id,
    sessionId,
    runId: m.runId ?? undefined,
    mode: m.mode,
    status: m.status,
    text: m.text,
    createdAt: new Date(m.createdAt),
    attachedFileIds: m.attachedFiles?.map((f) => f.id) ?? [],
  };
}

function toProtoConversation(c: ConversationRecord): runs.Conversation {
  return {
    ...c,
    workspaceId: c.workspaceId ?? undefined,
    title: c.title ?? undefined,
    inboxEmail: c.inboxEmail ?? undefined,
  };
}

const cursorOf = (cursor: string | undefined) => (cursor ? cursor : null);

/** The gateway-facing `Runs` service (v4): thin, validating what crosses the boundary. */
export function runsServer(r: Runs, log?: HandlerLog): runs.RunsServer {
  return unaryService(
    {
      createRun: async (req: runs.CreateRunRequest, call: ServerUnaryCall<unknown, unknown>) =>
        toProtoRun(await r.create(createRunInput(req), deadlineOfCall(call))),
      getRun: async (req: runs.RunRef) => toProtoRun(await r.get(projectIdOf(req.projectId), runIdOf(req.runId))),
      getRunStatus: async (req: runs.RunRef) => r.status(projectIdOf(req.projectId), runIdOf(req.runId)),
      listRuns: async (req: runs.ListRunsRequest): Promise<runs.ListRunsResponse> => {
        const page = await r.list(projectIdOf(req.projectId), {
          cursor: cursorOf(req.cursor),
          limit: limitOf(req.limit, 50, 100),
          sessionId: req.sessionId ? sessionIdOf(req.sessionId) : null,
        });
        return { runs: page.items.map(toProtoRun), nextCursor: page.nextCursor ?? undefined, hasMore: page.hasMore };
      },
      listRunEvents: async (req: runs.ListRunEventsRequest): Promise<runs.ListRunEventsResponse> => {
        const after = Math.max(0, req.after);
        const page = await r.events(
          projectIdOf(req.projectId),
          runIdOf(req.runId),
          after,
          limitOf(req.limit, 200, 1000),
        );
        return {
          events: page.events,
          nextAfter: page.events.at(-1)?.id ?? after,
          hasMore: page.hasMore,
          complete: page.complete && !page.hasMore,
        };
      },
      cancelRun: async (req: runs.RunRef) => toProtoRun(await r.cancel(projectIdOf(req.projectId), runIdOf(req.runId))),
      getConversation: async (req: runs.ConversationRef) =>
        toProtoConversation(await r.conversation(projectIdOf(req.projectId), sessionIdOf(req.sessionId))),
      listConversations: async (req: runs.ListConversationsRequest): Promise<runs.ListConversationsResponse> => {
        const page = await r.conversations(projectIdOf(req.projectId), {
          cursor: cursorOf(req.cursor),
          limit: limitOf(req.limit, 20, 100),
        });
        return {
          sessions: page.items.map(toProtoConversation),
          nextCursor: page.nextCursor ?? undefined,
          hasMore: page.hasMore,
        };
      },
      queueMessage: async (req: runs.QueueMessageRequest, call: ServerUnaryCall<unknown, unknown>) => {
        const sessionId = sessionIdOf(req.sessionId);
        const input = queueMessageInput(req);
        const message = await r.queueMessage(projectIdOf(req.projectId), sessionId, input, deadlineOfCall(call));
        return toProtoMessage(sessionId, message);
      },
      listQueue: async (req: runs.ConversationRef): Promise<runs.ListQueueResponse> => {
        const sessionId = sessionIdOf(req.sessionId);
        const { pending, steeringCutoffs } = await r.listQueue(projectIdOf(req.projectId), sessionId);
        return {
          messages: pending.map((m) => toProtoMessage(sessionId, m)),
          steeringCutoffs: steeringCutoffs.map((c) => ({
            sourceRunId: c.sourceRunId,
            createdAt: new Date(c.createdAt),
          })),
        };
      },
      getQueuedMessage: async (req: runs.QueuedMessageRef) => {
        const sessionId = sessionIdOf(req.sessionId);
        const message = await r.queuedMessage(projectIdOf(req.projectId), sessionId, messageIdOf(req.messageId));
        return toProtoMessage(sessionId, message);
      },
      cancelQueuedMessage: async (req: runs.QueuedMessageRef) => {
        const sessionId = sessionIdOf(req.sessionId);
        const message = await r.cancelQueuedMessage(projectIdOf(req.projectId), sessionId, messageIdOf(req.messageId));
        return toProtoMessage(sessionId, message);
      },
    },
    log,
  );
}
