import { InvalidArgumentError, LimitExceededError } from "@bas/errors";
import type { NewTask } from "../domain/commands";
import type {
  AttachedFile,
  CustomProxy,
  JsonValue,
  JudgeSettings,
  ModelParams,
  SecretDomains,
  SessionApi,
  SessionSettings,
} from "../domain/events";
import { reopensOnNextTurn } from "../domain/decide";
import type { SessionState } from "../domain/state";
import { type CallDeadline, defaultDeadline } from "./call-deadline";
import { derivedId } from "./derived-id";
import type {
  LiveLinks,
  LockedProject,
  ProjectLock,
  ProxyCredentials,
  SecretsVault,
  SessionQueries,
  SessionRecord,
} from "./ports";
import type { SessionCommands } from "./session-commands";
import { recordOf } from "./session-reads";

/** A create request after validation at the protocol edge. */
export interface CreateSessionInput {
  settings: Omit<SessionSettings, "liveUrl">;
  /** null = only prepare a sandbox (an idle keep-alive session). */
  task: string | null;
  /** Dispatch to this existing idle session instead of creating one. */
  sessionId: string | null;
  keepAlive: boolean;
  codeMode: boolean;
  outputSchema: JsonValue | null;
  sensitiveData: Record<string, string>;
  /** Keys of `sensitiveData` that may only be typed on some hosts. */
  secretDomains: SecretDomains;
  idempotencyKey: string | null;
  /** v4: a conversation whose tasks are runs, each with its own cost cap (`settings.maxCostUsd`). */
  api: SessionApi;
  /** v4: judge the run when the agent is done. */
  judge?: JudgeSettings;
  /** v4: the run's own model parameters. */
  modelParams?: ModelParams;
  /** v4: the run's own proxy, without its credentials. */
  customProxy?: CustomProxy;
  /** v4: the custom proxy's username and password: for the vault only, never for an event. */
  proxyCredentials?: ProxyCredentials;
  /** v4: files of the run's workspace it is pointed to, found by their upload ids. */
  attachedFiles?: AttachedFile[];
}

/** The session as read after the create, and the id of the task it dispatched (none for a task-less create). */
export interface CreatedSession {
  record: SessionRecord;
  taskId: string | null;
}

export interface CreateSessionDeps {
  commands: SessionCommands;
  queries: SessionQueries;
  vault: SecretsVault;
  projectLock: ProjectLock;
  newId: () => string;
  liveLinks: LiveLinks;
  maxActiveSessionsPerProject: number;
  /** A new, unguessable temporary mailbox address, for a session created with `inbox`. */
  newInboxAddress: () => string;
}

async function checkActiveLimit(locked: LockedProject, limit: number) {
  const active = await locked.countActive();
  if (active >= limit) {
    throw new LimitExceededError(
      `Too many concurrent active sessions. The project has ${active} active sessions (limit ${limit}); stop one or wait for one to finish.`,
    );
  }
}

/** A new turn of an existing session: what it appended and up to which version. */
type Turn = { version: number; events: readonly { type: string }[] };

/**
 * A new turn (a run or a queued message) of an existing session. One that will reopen a timed-out conversation makes
 * it active again, so it is counted against the project's limit under the project's lock, as a create is. (A session
 * that times out between the check and the turn is reopened unchecked: a window of milliseconds, once per timeout.)
 */
export function createReopenLimit(
  deps: Pick<CreateSessionDeps, "commands" | "projectLock" | "maxActiveSessionsPerProject">,
) {
  return async function withinLimitIfReopening<H extends Turn>(
    projectId: string,
    sessionId: string,
    deadline: CallDeadline,
    turn: () => Promise<H>,
  ): Promise<H> {
    if (!reopensOnNextTurn(await deps.commands.load(sessionId))) return turn();
    return deps.projectLock.run(projectId, deadline, async (locked) => {
      await checkActiveLimit(locked, deps.maxActiveSessionsPerProject);
      const handled = await turn();
      if (handled.events.some((e) => e.type === "SessionReopened")) await locked.reserve(sessionId, handled.version);
      return handled;
    });
  };
}

/** How long the answer after a commit may wait for the read models: what the deadline leaves, less the reply. */
const answerWithin = (deadline: CallDeadline) => Math.max(0, Math.min(5_000, deadline.remainingMs() - 250));

/**
 * Creates a session (with or without a task), or dispatches a task to an existing idle session. Nothing is appended
 * once the caller's deadline is too close to answer (`CallDeadline.checkBeforeCommit`): a caller told that the call
 * failed has nothing created.
 */
export function createSessionHandler(deps: CreateSessionDeps) {
  const { commands, vault } = deps;
  const withinLimitIfReopening = createReopenLimit(deps);

  function newTask(input: CreateSessionInput, sessionId: string, task: string): NewTask {
    const key = input.idempotencyKey;
    return {
      taskId: key ? derivedId("task", input.settings.projectId, sessionId, key) : deps.newId(),
      task,
      sensitiveDataKeys: Object.keys(input.sensitiveData).sort(),
      secretDomains: input.secretDomains,
      keepAlive: input.keepAlive,
      codeMode: input.codeMode,
      outputSchema: input.outputSchema,
      maxCostUsd: input.api === "v4" ? input.settings.maxCostUsd : null,
      ...(input.judge ? { judge: input.judge } : {}),
      ...(input.modelParams ? { modelParams: input.modelParams } : {}),
      ...(input.customProxy ? { customProxy: input.customProxy } : {}),
      ...(input.attachedFiles?.length ? { attachedFiles: input.attachedFiles } : {}),
    };
  }

  /** Secrets are stored before the task's event exists, so a runner never sees a task whose values are missing. */
  async function withSecrets<T>(
    input: CreateSessionInput,
    sessionId: string,
    task: NewTask | null,
    fn: () => Promise<T>,
  ) {
    const { sensitiveData: values, proxyCredentials } = input;
    if (!task || (task.sensitiveDataKeys.length === 0 && !proxyCredentials)) return fn();
    await vault.put(sessionId, task.taskId, { values, ...(proxyCredentials ? { proxyCredentials } : {}) });
    try {
      return await fn();
    } catch (err) {
      await vault.forget(sessionId, task.taskId).catch(() => undefined);
      throw err;
    }
  }

  async function dispatch(
    input: CreateSessionInput,
    sessionId: string,
    task: string,
    deadline: CallDeadline,
  ): Promise<CreatedSession> {
    const projectId = input.settings.projectId;
    const newOne = newTask(input, sessionId, task);
    const handled = await withinLimitIfReopening(projectId, sessionId, deadline, () =>
      withSecrets(input, sessionId, newOne, () => {
        deadline.checkBeforeCommit("dispatching the task");
        return commands.execute(
          sessionId,
          { type: "DispatchTask", projectId, task: newOne, api: input.api },
          { readModelsWaitMs: 0 },
        );
      }),
    );
    await commands.readModelsReach(handled.version, answerWithin(deadline));
    return { record: await read(projectId, sessionId, handled.state), taskId: newOne.taskId };
  }

  async function create(input: CreateSessionInput, deadline: CallDeadline): Promise<CreatedSession> {
    const projectId = input.settings.projectId;
    const key = input.idempotencyKey;
    const sessionId = key ? derivedId("session", projectId, key) : deps.newId();
    const task = input.task === null ? null : newTask(input, sessionId, input.task);
    // Counting and creating under one per-project lock keeps concurrent creates from slipping past the limit. The
    // lock is held only until the events are appended (the count includes what the read model does not show yet).
    const handled = await deps.projectLock.run(projectId, deadline, async (locked) => {
      const existing = key ? await commands.load(sessionId) : undefined;
      const isNew = !existing || existing.status === "none";
      if (isNew) await checkActiveLimit(locked, deps.maxActiveSessionsPerProject);
      const created = await withSecrets(input, sessionId, task, () => {
        deadline.checkBeforeCommit("creating the session");
        return commands.execute(
          sessionId,
          {
            type: "CreateSession",
            settings: {
              ...input.settings,
              liveUrl: deps.liveLinks.urlFor(sessionId),
              // Chosen once, here: the address is part of what the session was created with.
              ...(input.settings.inbox ? { inboxEmail: deps.newInboxAddress() } : {}),
            },
            options: {
              keepAlive: input.keepAlive || task === null,
              codeMode: input.codeMode,
              outputSchema: input.outputSchema,
            },
            idempotencyKey: key,
            task,
            preparationId: deps.newId(),
            api: input.api,
          },
          { readModelsWaitMs: 0 },
        );
      });
      if (isNew && created.events.length > 0) await locked.reserve(sessionId, created.version);
      return created;
    });
    // Committed: from here on the caller gets the session, from the read model if it catches up in time.
    await commands.readModelsReach(handled.version, answerWithin(deadline));
    return { record: await read(projectId, sessionId, handled.state), taskId: task?.taskId ?? null };
  }

  /** The read model has the write by now (commands wait for it); the aggregate answers if it lagged. */
  async function read(projectId: string, sessionId: string, state: SessionState): Promise<SessionRecord> {
    return (await deps.queries.get(projectId, sessionId)) ?? recordOf(state);
  }

  return (input: CreateSessionInput, deadline: CallDeadline = defaultDeadline()): Promise<CreatedSession> => {
    if (input.sessionId === null) return create(input, deadline);
    if (input.task === null) {
      throw new InvalidArgumentError("a task is required to dispatch to an existing session", {
        field: ["body", "task"],
      });
    }
    return dispatch(input, input.sessionId, input.task, deadline);
  };
}
