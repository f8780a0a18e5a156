import { BadRequestError } from "@bas/errors";
import { toSessionResponse } from "../../../domain/session-view";
import { defineRoute } from "../../../http/route";
import { v3Schemas } from "../../../schemas/v3-schemas";

export const route = defineRoute({
  method: "post",
  path: "/api/v3/sessions",
  auth: "api-key",
  operationId: "createSession",
  summary: "Create a session and dispatch a task, dispatch a task to an idle session, or create an idle session",
  tags: ["Sessions"],
  request: (deps) => ({ body: v3Schemas(deps.models).createSessionBody }),
  responses: (deps) => ({
    200: { description: "The session; liveUrl is set at once", schema: v3Schemas(deps.models).session },
  }),
  errors: [400, 402, 404, 409, 413, 429],
  async handler({ body, project, headers, signal }, deps) {
    if (deps.models.get(body.model)?.requiresOwnKey && !body.useOwnKey)
      throw new BadRequestError(
        `Model '${body.model}' is served only with your own provider key: send "use_own_key": true`,
      );
    if (body.task) await deps.requireModelRoute(body.model);
    if (body.useOwnKey) await deps.requireOwnKey(project.projectId, body.model);
    await deps.requireCredit(project.projectId, body.sessionId ?? undefined);
    // A new session needs a browser of its own; a task for an existing session uses the browser that session has.
    if (!body.sessionId) await deps.requireBrowserCapacity(project.projectId);
    // An unknown profile is the caller's mistake, told now rather than when the browser starts.
    if (body.profileId) await deps.browserPool.getProfile({ projectId: project.projectId, profileId: body.profileId });
    if (body.workspaceId) {
      await deps.workspaces.getWorkspace({ projectId: project.projectId, workspaceId: body.workspaceId });
    }
    const idempotencyKey = headers["idempotency-key"];
    const session = await deps.sessions.createSession(
      {
        projectId: project.projectId,
        task: body.task,
        model: body.model,
        thinkingLevel: body.thinkingLevel ?? undefined,
        sessionId: body.sessionId ?? undefined,
        keepAlive: body.keepAlive,
        maxCostUsd: body.maxCostUsd ?? undefined,
        workspaceId: body.workspaceId ?? undefined,
        browser: {
          proxyCountryCode: body.proxyCountryCode ?? undefined,
          profileId: body.profileId ?? undefined,
          screenWidth: body.browserScreenWidth ?? undefined,
          screenHeight: body.browserScreenHeight ?? undefined,
          record: body.enableRecording,
          allowedDomains: body.allowedDomains ?? [],
        },
        outputSchema: body.outputSchema ?? undefined,
        sensitiveData: body.sensitiveData ?? {},
        inbox: body.inbox,
        codeMode: body.codeMode,
        useOwnKey: body.useOwnKey,
        idempotencyKey: typeof idempotencyKey === "string" && idempotencyKey ? idempotencyKey.slice(0, 200) : undefined,
      },
      // A caller that went away is told nothing: the sessions service then creates nothing either (the cancel
      // reaches it before its commit point), and neither does it once this call's deadline is near.
      { signal },
    );
    deps.sessionCache.invalidate(session.id);
    return { body: toSessionResponse(session, deps.urls.sign) };
  },
});
