import type { runs, sessions } from "@bas/proto";
import { MAX_ALLOWED_DOMAINS, normaliseDomains, PROXY_HOST_PATTERN } from "@bas/egress-policy/domains";
import { InvalidArgumentError, NotFoundError } from "@bas/errors";
import Decimal from "decimal.js";
import type { CreateSessionInput } from "../../app/create-session";
import type { CreateRunInput, QueueMessageInput } from "../../app/runs";
import type { MessageCursor } from "../../app/ports";
import type { StopStrategy } from "../../domain/commands";
import type { JsonValue, JudgeSettings, ModelParams, SecretDomains } from "../../domain/events";

/**
 * Checks what crosses the protocol boundary. The gateway validates the REST body first (and answers 422 in the
 * contract's shape); these checks keep the service safe on its own: ids reach NATS subjects, so only UUIDs pass.
 */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DECIMAL = /^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$/;
const THINKING_LEVELS = ["disabled", "low", "medium", "high"];

const invalid = (field: (string | number)[], message: string) => new InvalidArgumentError(message, { field });

/** A session id from the caller or the runner; anything that is not a UUID cannot name a session. */
export function sessionIdOf(value: string): string {
  if (!UUID.test(value)) throw new NotFoundError("Session not found");
  return value.toLowerCase();
}

/** A run id from the caller: anything that is not a UUID cannot name a run. */
export function runIdOf(value: string): string {
  if (!UUID.test(value)) throw new NotFoundError("Run not found");
  return value.toLowerCase();
}

/** A workspace id from the caller: anything that is not a UUID cannot name a workspace. */
export function workspaceIdOf(value: string): string {
  if (!UUID.test(value)) throw new NotFoundError("Workspace not found");
  return value.toLowerCase();
}

export function projectIdOf(value: string): string {
  if (!value || value.length > 200) throw invalid(["project_id"], "project_id is required");
  return value;
}

function optionalUuid(value: string | undefined, field: string): string | null {
  if (value === undefined || value === "") return null;
  if (!UUID.test(value)) throw invalid(["body", field], `${field} must be a UUID`);
  return value.toLowerCase();
}

function maxCost(value: string | undefined): string | null {
  if (value === undefined) return null;
  const ok = DECIMAL.test(value) && value !== "" && new Decimal(value).gt(0);
  if (!ok) throw invalid(["body", "maxCostUsd"], "maxCostUsd must be a positive decimal");
  return value;
}

function screen(browser: sessions.BrowserSettings | undefined): { width: number | null; height: number | null } {
  const width = browser?.screenWidth ?? null;
  const height = browser?.screenHeight ?? null;
  if ((width === null) !== (height === null)) {
    throw invalid(["body", "browserScreenWidth"], "browserScreenWidth and browserScreenHeight go together");
  }
  if (width !== null && (width < 320 || width > 7680)) throw invalid(["body", "browserScreenWidth"], "out of range");
  if (height !== null && (height < 240 || height > 4320))
    throw invalid(["body", "browserScreenHeight"], "out of range");
  return { width, height };
}

function outputSchema(value: unknown): JsonValue | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw invalid(["body", "outputSchema"], "outputSchema must be a JSON Schema object");
  }
  return value as JsonValue;
}

export function createSessionInput(req: sessions.CreateSessionRequest): CreateSessionInput {
  const projectId = projectIdOf(req.projectId);
  if (req.task !== undefined && !req.task.trim()) throw invalid(["body", "task"], "task must not be empty");
  const task = req.task ?? null;
  if (!req.model) throw invalid(["body", "model"], "model is required");
  if (req.thinkingLevel !== undefined && !THINKING_LEVELS.includes(req.thinkingLevel)) {
    throw invalid(["body", "thinkingLevel"], `thinkingLevel must be one of ${THINKING_LEVELS.join(", ")}`);
  }
  const country = req.browser?.proxyCountryCode;
  if (country !== undefined && !/^[a-z]{2}$/.test(country)) {
    throw invalid(["body", "proxyCountryCode"], "proxyCountryCode must be a lowercase two-letter code");
  }
  for (const key of Object.keys(req.sensitiveData)) {
    if (!key.trim()) throw invalid(["body", "sensitiveData"], "sensitiveData keys must not be empty");
  }
  const key = req.idempotencyKey;
  if (key !== undefined && (key.length === 0 || key.length > 255)) {
    throw invalid(["header", "Idempotency-Key"], "an idempotency key has 1 to 255 characters");
  }
  const { width, height } = screen(req.browser);
  const allowedDomains = allowedDomainsOf(req.browser?.allowedDomains ?? []);
  return {
    settings: {
      projectId,
      model: req.model,
      thinkingLevel: req.thinkingLevel ?? null,
      useOwnKey: req.useOwnKey,
      maxCostUsd: maxCost(req.maxCostUsd),
      workspaceId: optionalUuid(req.workspaceId, "workspaceId"),
      profileId: optionalUuid(req.browser?.profileId, "profileId"),
      proxyCountryCode: country ?? null,
      screenWidth: width,
      screenHeight: height,
      record: req.browser?.record ?? false,
      ...(allowedDomains ? { allowedDomains } : {}),
      inbox: req.inbox,
    },
    task,
    sessionId: req.sessionId === undefined ? null : sessionIdOf(req.sessionId),
    keepAlive: req.keepAlive,
    codeMode: req.codeMode,
    outputSchema: outputSchema(req.outputSchema),
    sensitiveData: { ...req.sensitiveData },
    secretDomains: {},
    idempotencyKey: key ?? null,
    api: "v3",
  };
}

export function pageOf(req: sessions.ListSessionsRequest): { page: number; pageSize: number } {
  const page = req.page || 1;
  const pageSize = req.pageSize || 20;
  if (page < 1) throw invalid(["query", "page"], "page must be at least 1");
  if (pageSize < 1 || pageSize > 100) throw invalid(["query", "page_size"], "page_size must be between 1 and 100");
  return { page, pageSize };
}

export function strategyOf(value: string): StopStrategy {
  if (value === "" || value === "session") return "session";
  if (value === "task") return "task";
  throw invalid(["body", "strategy"], "strategy must be task or session");
}

export function cursorOf(req: sessions.ListMessagesRequest): MessageCursor {
  const limit = req.limit || 50;
  if (limit < 1 || limit > 100) throw invalid(["query", "limit"], "limit must be between 1 and 100");
  for (const field of ["after", "before"] as const) {
    const value = req[field];
    if (value !== undefined && !UUID.test(value)) throw invalid(["query", field], `${field} must be a message id`);
  }
  return { after: req.after?.toLowerCase(), before: req.before?.toLowerCase(), limit, latest: req.latest };
}

/** A run's create request: the checks of a session's, for the fields a run has. */
export function createRunInput(req: runs.CreateRunRequest): CreateRunInput {
  if (!req.task.trim()) throw invalid(["body", "task"], "task must not be empty");
  const {
    api: _api,
    keepAlive: _k,
    codeMode: _c,
    outputSchema: _o,
    ...input
  } = createSessionInput({
    ...req,
    keepAlive: true,
    codeMode: false,
    sensitiveData: {},
    outputSchema: undefined,
  });
  return {
    ...input,
    ...secretsOf(req.secretBindings),
    task: req.task,
    ...(req.judge ? { judge: judgeOf(req.judge) } : {}),
    ...(req.modelParams ? { modelParams: modelParamsOf(req.modelParams) } : {}),
    ...customProxyOf(req.browser?.customProxy),
    attachedFileIds: attachedFileIdsOf(req.attachedFileIds),
  };
}

/** The uploads a run is pointed to: at most 20 ids, each once. */
function attachedFileIdsOf(ids: readonly string[]): string[] {
  if (ids.length > 20) throw invalid(["body", "attachedFileIds"], "attachedFileIds may name at most 20 files");
  const checked = ids.map((id, i) => {
    if (!UUID.test(id)) throw invalid(["body", "attachedFileIds", i], "attachedFileIds must be upload ids (UUIDs)");
    return id.toLowerCase();
  });
  return [...new Set(checked)];
}

/** A run's own proxy: where it is (for the task) and its credentials (for the vault only, never echoed). */
function customProxyOf(
  proxy: sessions.CustomProxy | undefined,
): Pick<CreateRunInput, "customProxy" | "proxyCredentials"> {
  if (!proxy) return {};
  const at = (field: string) => ["body", "browserSettings", "customProxy", field];
  const { host, port, username, password, ignoreCertErrors } = proxy;
  if (host.length > 255 || !PROXY_HOST_PATTERN.test(host)) {
    throw invalid(at("host"), "host must be a host name or an IP address, without scheme, port or path");
  }
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw invalid(at("port"), "port must be from 1 to 65535");
  const sized = (value: string | undefined) => value === undefined || (value.length >= 1 && value.length <= 255);
  if (!sized(username) || username?.includes(":")) {
    throw invalid(at("username"), "username must have 1 to 255 characters, without ':'");
  }
  if (!sized(password)) throw invalid(at("password"), "password must have 1 to 255 characters");
  const credentials = username !== undefined || password !== undefined;
  return {
    customProxy: { host, port, ignoreCertErrors },
    ...(credentials ? { proxyCredentials: { username, password } } : {}),
  };
}

/** A run's model parameters, each within what providers take. */
function modelParamsOf(params: ModelParams): ModelParams {
  const at = (field: string) => ["body", "modelParams", field];
  const { thinkingLevel, temperature, topP, maxOutputTokens } = params;
  if (thinkingLevel !== undefined && !THINKING_LEVELS.includes(thinkingLevel)) {
    throw invalid(at("thinkingLevel"), `thinkingLevel must be one of ${THINKING_LEVELS.join(", ")}`);
  }
  if (temperature !== undefined && !(temperature >= 0 && temperature <= 2)) {
    throw invalid(at("temperature"), "temperature must be from 0 to 2");
  }
  if (topP !== undefined && !(topP > 0 && topP <= 1)) throw invalid(at("topP"), "topP must be above 0 and at most 1");
  if (maxOutputTokens !== undefined && !(Number.isInteger(maxOutputTokens) && maxOutputTokens >= 1)) {
    throw invalid(at("maxOutputTokens"), "maxOutputTokens must be a whole number of at least 1");
  }
  return params;
}

/** The judge's settings: the caller's context for the judge, if any, within what a prompt should carry. */
function judgeOf(judge: JudgeSettings): JudgeSettings {
  if (judge.context !== undefined && judge.context.length > 10_000) {
    throw invalid(["body", "judge", "context"], "the judge's context has at most 10,000 characters");
  }
  return judge.context?.trim() ? { context: judge.context } : {};
}

const ALIAS = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/** The session browser's `allowedDomains`, checked and lowercase; none (empty) = no limit. */
function allowedDomainsOf(patterns: string[]): string[] | undefined {
  if (patterns.length === 0) return undefined;
  if (patterns.length > MAX_ALLOWED_DOMAINS) {
    throw invalid(["body", "allowedDomains"], `allowedDomains holds at most ${MAX_ALLOWED_DOMAINS} host patterns`);
  }
  const checked = normaliseDomains(patterns);
  if ("badIndex" in checked) {
    throw invalid(
      ["body", "allowedDomains", checked.badIndex],
      `allowedDomains[${checked.badIndex}] must be a host name like example.com or *.example.com`,
    );
  }
  return checked.domains;
}

/** A run's secret bindings: the values (for the vault) and the hosts each may be typed on (for the task). */
function secretsOf(bindings: runs.SecretBinding[]): Pick<CreateRunInput, "sensitiveData" | "secretDomains"> {
  const sensitiveData: Record<string, string> = {};
  const secretDomains: SecretDomains = {};
  bindings.forEach((b, i) => {
    const at = (field: string) => ["body", "secretBindings", i, field];
    if (!ALIAS.test(b.alias)) throw invalid(at("alias"), "alias must be 1-64 letters, digits, _ . or -");
    if (Object.hasOwn(sensitiveData, b.alias)) throw invalid(at("alias"), `alias '${b.alias}' is bound twice`);
    if (!b.value) throw invalid(at("source"), "the secret's value must not be empty");
    const checked = normaliseDomains(b.allowedDomains);
    if (b.allowedDomains.length === 0 || "badIndex" in checked) {
      throw invalid(at("allowedDomains"), "allowedDomains must name at least one host (example.com, *.example.com)");
    }
    sensitiveData[b.alias] = b.value;
    secretDomains[b.alias] = { domains: checked.domains };
  });
  return { sensitiveData, secretDomains };
}

/** A page size from 1 to `max` (0 = not given: `fallback`). */
export function limitOf(value: number, fallback: number, max: number): number {
  if (value === 0) return fallback;
  if (value < 1 || value > max) throw invalid(["query", "limit"], `limit must be from 1 to ${max}`);
  return value;
}

/** Longest text a queued message may have (as a run's task). */
const MAX_MESSAGE_CHARS = 100_000;
const MAX_DEDUPE_KEY_CHARS = 256;

export function queueMessageInput(req: runs.QueueMessageRequest): QueueMessageInput {
  if (!req.text.trim()) throw invalid(["body", "text"], "text must not be empty");
  if (req.text.length > MAX_MESSAGE_CHARS) {
    throw invalid(["body", "text"], `text must be at most ${MAX_MESSAGE_CHARS} characters`);
  }
  const dedupeKey = req.dedupeKey || null;
  if (dedupeKey !== null && dedupeKey.length > MAX_DEDUPE_KEY_CHARS) {
    throw invalid(["header", "x-v4-queue-deduplicate"], `at most ${MAX_DEDUPE_KEY_CHARS} characters`);
  }
  return {
    text: req.text,
    interrupt: req.interrupt,
    dedupeKey,
    attachedFileIds: attachedFileIdsOf(req.attachedFileIds),
  };
}

/** A message id from the caller: a positive integer, or it names no message. */
export function messageIdOf(value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new NotFoundError("Queued message not found");
  return value;
}
