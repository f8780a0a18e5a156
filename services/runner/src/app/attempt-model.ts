import { callParams, type ModelRoute } from "../domain/model-routes";
import { createRedactor, type Redactor } from "../domain/secrets";
import type { Attempt, TaskDisposition } from "./attempt";
import { ignoreStale, recordUsage } from "./attempt-reports";
import { createModelCaller } from "./model-caller";
import { observeCompletion } from "./observed-completion";
import type { ModelCaller, TokenUsage } from "./ports";

/** The model an attempt talks to, with the task's secrets kept out of what it sees. */
export interface AttemptModel {
  route: ModelRoute;
  model: ModelCaller;
  redactor: Redactor;
  /** The sensitiveData values, fetched once from the sessions service when first needed. */
  secretValues(): Promise<Record<string, string>>;
}

/**
 * Resolves the task's model route and key (the project's own key with `useOwnKey`) and builds the model caller:
 * budget checks, usage reports and redaction around every call. A missing own key fails the task: the disposition.
 */
export async function resolveModel(t: Attempt): Promise<AttemptModel | TaskDisposition> {
  const { assignment: a, deps } = t;
  const route = deps.resolveRoute(a.model);
  const apiKey = a.useOwnKey
    ? await t.waitOut("Postgres", () => deps.ownKey(a.projectId, route.provider))
    : route.apiKey;
  if (a.useOwnKey && !apiKey) {
    const error = `use_own_key is set but the project has no provider key stored for "${route.provider}"`;
    await ignoreStale(deps.reports.taskFailed({ sessionId: a.sessionId, taskId: a.taskId, error }));
    return { kind: "ack" };
  }

  let secrets: Record<string, string> | undefined;
  const secretValues = async () => {
    secrets ??= a.sensitiveDataKeys.length
      ? (await deps.reports.taskSecrets({ sessionId: a.sessionId, taskId: a.taskId })).values
      : {};
    return secrets;
  };
  // The redactor must know the values before the first prompt: the task text or a page could contain them.
  const redactor = createRedactor(a.sensitiveDataKeys.length ? await secretValues() : {});

  // A run's own parameters win over the session's thinking level.
  const target = { route, apiKey, ...callParams(route, { thinkingLevel: a.thinkingLevel, ...a.modelParams }) };
  const model = createModelCaller({
    complete: observeCompletion({ model: a.model, providerModel: route.model }, deps.metrics, (request) =>
      deps.complete(target, request),
    ),
    ...(deps.checkBudget ? { checkBudget: (estimate: TokenUsage) => deps.checkBudget!(a, estimate) } : {}),
    recordUsage: (usage, call) => recordUsage(a, t.attempt, usage, call, deps),
    redact: redactor,
  });
  return { route, model, redactor, secretValues };
}
