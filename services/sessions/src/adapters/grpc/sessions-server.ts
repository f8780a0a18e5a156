import type { ServerUnaryCall } from "@grpc/grpc-js";
import type { sessions } from "@bas/proto";
import { type HandlerLog, unaryService } from "@bas/service-kit";
import type { CallDeadline } from "../../app/call-deadline";
import type { CreatedSession, CreateSessionInput } from "../../app/create-session";
import type { SessionLifecycle } from "../../app/session-lifecycle";
import type { LiveViewTarget } from "../../app/live-view";
import type { SessionReads } from "../../app/session-reads";
import { deadlineOfCall } from "./deadline-of-call";
import { createSessionInput, cursorOf, pageOf, projectIdOf, sessionIdOf, strategyOf } from "./requests";
import { toProtoMessage, toProtoSession } from "./to-proto";

export interface SessionsServerDeps {
  create(input: CreateSessionInput, deadline: CallDeadline): Promise<CreatedSession>;
  lifecycle: SessionLifecycle;
  reads: SessionReads;
  liveView(sessionId: string, token: string): Promise<LiveViewTarget>;
  log?: HandlerLog;
}

/** The gateway-facing `Sessions` service: thin, validating what crosses the boundary. */
export function sessionsServer(deps: SessionsServerDeps): sessions.SessionsServer {
  const { lifecycle, reads } = deps;
  return unaryService(
    {
      createSession: async (req: sessions.CreateSessionRequest, call: ServerUnaryCall<unknown, unknown>) =>
        toProtoSession((await deps.create(createSessionInput(req), deadlineOfCall(call))).record),
      getSession: async (req: sessions.GetSessionRequest) =>
        toProtoSession(await reads.get(projectIdOf(req.projectId), sessionIdOf(req.sessionId))),
      listSessions: async (req: sessions.ListSessionsRequest): Promise<sessions.ListSessionsResponse> => {
        const { page, pageSize } = pageOf(req);
        const result = await reads.list(projectIdOf(req.projectId), page, pageSize);
        return { ...result, sessions: result.records.map(toProtoSession) };
      },
      stopSession: async (req: sessions.StopSessionRequest, call: ServerUnaryCall<unknown, unknown>) =>
        toProtoSession(
          await lifecycle.stop(
            projectIdOf(req.projectId),
            sessionIdOf(req.sessionId),
            strategyOf(req.strategy),
            deadlineOfCall(call),
          ),
        ),
      deleteSession: async (req: sessions.DeleteSessionRequest) => {
        await lifecycle.delete(projectIdOf(req.projectId), sessionIdOf(req.sessionId));
        return {};
      },
      listMessages: async (req: sessions.ListMessagesRequest): Promise<sessions.ListMessagesResponse> => {
        const page = await reads.messages(projectIdOf(req.projectId), sessionIdOf(req.sessionId), cursorOf(req));
        return { messages: page.messages.map(toProtoMessage), hasMore: page.hasMore, complete: page.complete };
      },
      getLiveView: async (req: sessions.GetLiveViewRequest): Promise<sessions.LiveView> => {
        const target = await deps.liveView(sessionIdOf(req.sessionId), req.token);
        return { projectId: target.projectId, browserId: target.browserId ?? undefined, ended: target.ended };
      },
    },
    deps.log,
  );
}
