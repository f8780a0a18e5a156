import { NotFoundError } from "@bas/errors";
import type { AttachedFile, MessageQueued } from "../domain/events";
import type { QueuedMessage, SteeringCutoff } from "../domain/queue";
import type { SessionState } from "../domain/state";
import type { CallDeadline } from "./call-deadline";
import type { CreatedSession, CreateSessionInput, createReopenLimit } from "./create-session";
import type { Workspaces } from "./workspaces";
import type { ConversationRecord, RunEventRecord, RunQueries, RunRecord, RunStatusView } from "./ports";
import type { SessionCommands } from "./session-commands";

const runNotFound = () => new NotFoundError("Run not found");
const sessionNotFound = () => new NotFoundError("Session not found");
const messageNotFound = () => new NotFoundError("Queued message not found");

/** A message for a conversation's queue, as the caller sends it. */
export interface QueueMessageInput {
  text: string;
  interrupt: boolean;
  /** The caller's `X-V4-Queue-Deduplicate`. */
  dedupeKey: string | null;
  /** Files of the conversation's workspace, by the ids their uploads were given. */
  attachedFileIds: string[];
}

/** The message a queue command is about, from the state it left (fresher than any read model). */
function messageIn(state: SessionState, which: (m: QueuedMessage) => boolean): QueuedMessage {
  const message = state.status === "none" ? undefined : state.queue?.messages.find(which);
  if (!message) throw messageNotFound();
  return message;
}

/** A v4 run as the caller gives it: a task for a new conversation, or for an existing one (`sessionId`). */
export type CreateRunInput = Omit<
  CreateSessionInput,
  "api" | "keepAlive" | "codeMode" | "outputSchema" | "attachedFiles"
> & {
  task: string;
  /** Files of the run's workspace, by the ids their uploads were given. */
  attachedFileIds: string[];
};

export interface RunsDeps {
  create(input: CreateSessionInput, deadline: CallDeadline): Promise<CreatedSession>;
  withinLimitIfReopening: ReturnType<typeof createReopenLimit>;
  commands: SessionCommands;
  queries: RunQueries;
  /** Runs without a workspace named get the project's default one; attached files are found in the run's. */
  workspaces: Pick<Workspaces, "defaultFor" | "attachedFiles">;
}

/**
 * The v4 run API over the session aggregate: a conversation is a keep-alive session made through this API, and each
 * run is one of its tasks (same id). Reads come from the v4 read model, which only holds what this API made.
 */
export function createRuns(deps: RunsDeps) {
  const { queries } = deps;

  async function queueOf(projectId: string, sessionId: string) {
    const queue = await queries.queue(projectId, sessionId);
    if (!queue) throw sessionNotFound();
    return queue;
  }

  async function conversationOf(projectId: string, sessionId: string): Promise<ConversationRecord> {
    const conversation = await queries.conversation(projectId, sessionId);
    if (!conversation) throw sessionNotFound();
    return conversation;
  }

  /**
   * The files a run is pointed to, in its workspace: a new conversation's, or for any later turn its conversation's
   * (whatever the request names); and the ids that name no file there.
   */
  async function filesAttached(
    projectId: string,
    uploadIds: readonly string[],
    where: { sessionId: string } | { workspaceId: string },
  ): Promise<{ files: AttachedFile[]; missing: string[] }> {
    if (!uploadIds.length) return { files: [], missing: [] };
    const workspaceId =
      "workspaceId" in where ? where.workspaceId : (await conversationOf(projectId, where.sessionId)).workspaceId;
    if (!workspaceId) return { files: [], missing: [...uploadIds] };
    return deps.workspaces.attachedFiles(projectId, workspaceId, uploadIds);
  }

  async function get(projectId: string, runId: string): Promise<RunRecord> {
    const run = await queries.get(projectId, runId);
    if (!run) throw runNotFound();
    return run;
  }

  return {
    /**
     * Creates the run, pointed to the attached files that are there; `missingFileIds` are those that are not, which the
     * caller is told of (as the hosted API does) while the run goes on without them.
     */
    async create(input: CreateRunInput, deadline: CallDeadline): Promise<RunRecord & { missingFileIds: string[] }> {
      const { projectId } = input.settings;
      const { attachedFileIds, ...rest } = input;
      // Every run has a workspace: without one named, the project's default one (the same id for every run of the project).
      const workspaceId = input.settings.workspaceId ?? (await deps.workspaces.defaultFor(projectId));
      const { files: attachedFiles, missing: missingFileIds } = await filesAttached(
        projectId,
        attachedFileIds,
        input.sessionId ? { sessionId: input.sessionId } : { workspaceId },
      );
      // The conversation keeps its browser between runs (until it is idle too long).
      const created = await deps.create(
        {
          ...rest,
          ...(attachedFiles.length ? { attachedFiles } : {}),
          settings: { ...input.settings, workspaceId },
          api: "v4",
          keepAlive: true,
          codeMode: false,
          outputSchema: null,
        },
        deadline,
      );
      const runId = created.taskId;
      if (!runId) throw new Error("a run was created without a task");
      // The read model has the run by now (commands wait for it); when it lagged, the run is new and queued.
      const session = created.record.session;
      const run = (await queries.get(projectId, runId)) ?? {
        id: runId,
        sessionId: session.id,
        workspaceId: session.settings.workspaceId,
        task: input.task,
        title: null,
        model: session.settings.model,
        status: "queued",
        result: null,
        error: null,
        judgement: null,
        attachedFileIds: attachedFiles.length ? attachedFiles.map((f) => f.id) : null,
        attachments: attachedFiles,
        inputTokens: 0,
        outputTokens: 0,
        totalCostUsd: "0",
        createdAt: new Date(session.updatedAt),
        updatedAt: new Date(session.updatedAt),
      };
      return { ...run, missingFileIds };
    },

    get,

    async status(projectId: string, runId: string): Promise<RunStatusView> {
      const status = await queries.status(projectId, runId);
      if (!status) throw runNotFound();
      return status;
    },

    async list(projectId: string, page: { cursor: string | null; limit: number; sessionId: string | null }) {
      await deps.commands.readModelsCaughtUp();
      return queries.list(projectId, page);
    },

    async events(
      projectId: string,
      runId: string,
      after: number,
      limit: number,
    ): Promise<{ events: RunEventRecord[]; hasMore: boolean; complete: boolean }> {
      await get(projectId, runId);
      return queries.events(runId, after, limit);
    },

    /** Stops the run if it is still going; a run that ended is answered as it is. */
    async cancel(projectId: string, runId: string): Promise<RunRecord> {
      const run = await get(projectId, runId);
      await deps.commands.execute(run.sessionId, { type: "CancelTask", projectId, taskId: runId });
      return get(projectId, runId);
    },

    conversation: conversationOf,

    async conversations(projectId: string, page: { cursor: string | null; limit: number }) {
      await deps.commands.readModelsCaughtUp();
      return queries.conversations(projectId, page);
    },

    async queueMessage(
      projectId: string,
      sessionId: string,
      input: QueueMessageInput,
      deadline: CallDeadline,
    ): Promise<QueuedMessage> {
      const { attachedFileIds, ...message } = input;
      // A queued message has no answer that could list missing files: it is refused instead.
      const { files: attachedFiles, missing } = await filesAttached(projectId, attachedFileIds, { sessionId });
      if (missing.length) {
        throw new NotFoundError(
          `Attached file not found in the conversation's workspace: ${missing.join(", ")}. Attach the id a v4 upload ` +
            "(POST /api/v4/workspaces/{id}/files/upload) gave, once its file is uploaded to that workspace and " +
            "while no later write to its path has replaced it.",
        );
      }
      const { state, events } = await deps.withinLimitIfReopening(projectId, sessionId, deadline, () =>
        deps.commands.execute(sessionId, {
          type: "QueueMessage",
          projectId,
          ...message,
          ...(attachedFiles.length ? { attachedFiles } : {}),
        }),
      );
      const queued = events.find((e) => e.type === "MessageQueued")?.data as MessageQueued["data"] | undefined;
      // Nothing appended: a retried send, answered with the message its key named first.
      return messageIn(state, (m) => (queued ? m.id === queued.messageId : m.dedupeKey === input.dedupeKey));
    },

    /** The messages still waiting, oldest first, and where interrupts cut runs short. */
    async listQueue(
      projectId: string,
      sessionId: string,
    ): Promise<{ pending: QueuedMessage[]; steeringCutoffs: SteeringCutoff[] }> {
      const queue = await queueOf(projectId, sessionId);
      return {
        pending: queue.messages.filter((m) => m.status === "pending"),
        steeringCutoffs: queue.steeringCutoffs ?? [],
      };
    },

    async queuedMessage(projectId: string, sessionId: string, messageId: number): Promise<QueuedMessage> {
      const message = (await queueOf(projectId, sessionId)).messages.find((m) => m.id === messageId);
      if (!message) throw messageNotFound();
      return message;
    },

    async cancelQueuedMessage(projectId: string, sessionId: string, messageId: number): Promise<QueuedMessage> {
      const { state } = await deps.commands.execute(sessionId, { type: "CancelQueuedMessage", projectId, messageId });
      return messageIn(state, (m) => m.id === messageId);
    },
  };
}

export type Runs = ReturnType<typeof createRuns>;
