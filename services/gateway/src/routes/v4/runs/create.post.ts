import { BadRequestError, InvalidArgumentError } from "@bas/errors";
import { unsupportedModelParam } from "../../../domain/model-params";
import { defineRoute } from "../../../http/route";
import { customProxyOf } from "../../../schemas/custom-proxy";
import { runSchemas } from "./run-schemas";

export const route = defineRoute({
  method: "post",
  path: "/api/v4/runs",
  auth: "api-key",
  operationId: "createRun",
  summary: "Start a run: a new conversation, or with sessionId the next turn of an idle one",
  tags: ["Runs"],
  request: (deps) => ({ body: runSchemas(deps.models).RunCreateRequest }),
  responses: (deps) => ({
    200: { description: "The run, queued; poll its status", schema: runSchemas(deps.models).RunCreateResponse },
  }),
  errors: [400, 402, 404, 409, 413, 429],
  async handler({ body, project, headers, signal }, deps) {
    if (deps.models.get(body.model)?.requiresOwnKey) {
      throw new BadRequestError(
        `Model '${body.model}' is served only with your own provider key, which v4 runs do not use`,
      );
    }
    const route = await deps.requireModelRoute(body.model);
    const params = body.modelParams ?? {};
    const unsupported = route && unsupportedModelParam(body.model, params, route);
    if (unsupported) {
      throw new InvalidArgumentError(unsupported.message, { field: ["body", "modelParams", unsupported.field] });
    }
    await deps.requireCredit(project.projectId, body.sessionId ?? undefined);
    // A new conversation needs a browser of its own; a follow-up uses the one its conversation has.
    if (!body.sessionId) await deps.requireBrowserCapacity(project.projectId);
    const key = headers["idempotency-key"];
    const browser = body.browserSettings;
    // An unknown profile is the caller's mistake, told now rather than when the browser starts.
    if (browser?.profileId) {
      await deps.browserPool.getProfile({ projectId: project.projectId, profileId: browser.profileId });
    }
    if (body.workspaceId) {
      await deps.workspaces.getWorkspace({ projectId: project.projectId, workspaceId: body.workspaceId });
    }
    const run = await deps.runs.createRun(
      {
        projectId: project.projectId,
        task: body.task,
        model: body.model,
        thinkingLevel: body.modelParams?.thinkingLevel ?? undefined,
        sessionId: body.sessionId ?? undefined,
        workspaceId: body.workspaceId ?? undefined,
        browser: {
          proxyCountryCode: browser === undefined || browser === null ? "us" : (browser.proxyCountryCode ?? undefined),
          profileId: browser?.profileId ?? undefined,
          screenWidth: browser?.screenWidth ?? undefined,
          screenHeight: browser?.screenHeight ?? undefined,
          record: browser?.record ?? false,
          customProxy: customProxyOf(browser?.customProxy),
          allowedDomains: body.allowedDomains ?? [],
        },
        maxCostUsd: body.maxCostUsd ?? undefined,
        useOwnKey: false,
        idempotencyKey: typeof key === "string" && key ? key.slice(0, 200) : undefined,
        judge: body.judge ? { context: body.judge.context ?? undefined } : undefined,
        modelParams: body.modelParams
          ? {
              thinkingLevel: params.thinkingLevel ?? undefined,
              temperature: params.temperature ?? undefined,
              topP: params.topP ?? undefined,
              maxOutputTokens: params.maxOutputTokens ?? undefined,
            }
          : undefined,
        secretBindings: (body.secretBindings ?? []).map((b) => ({
          alias: b.alias,
          value: b.source.value,
          allowedDomains: b.allowedDomains,
        })),
        attachedFileIds: body.attachedFileIds ?? [],
        inbox: body.agentmail,
      },
      // A caller that went away is told nothing: the sessions service then creates nothing either.
      { signal },
    );
    return {
      body: {
        id: run.id,
        status: run.status,
        model: run.model,
        sessionId: run.sessionId,
        workspaceId: run.workspaceId,
        eventsUrl: `${deps.publicUrl}/api/v4/runs/${run.id}/events`,
        missingFileIds: run.missingFileIds,
      },
    };
  },
});
