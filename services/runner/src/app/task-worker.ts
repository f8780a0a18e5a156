import type { runner, sessions } from "@bas/proto";
import type { CallParams, ModelRoute } from "../domain/model-routes";
import type { PendingStep } from "../domain/step-memory";
import type { AgentOptions } from "./agent-loop";
import {
  type Attempt,
  dispositionFor,
  type InterruptReason,
  isDisposition,
  newAttempt,
  type TaskDisposition,
} from "./attempt";
import { dispositionOfFailure } from "./attempt-failure";
import { resolveModel } from "./attempt-model";
import { ignoreStale, settleLastUsage, type TaskReports, type UsageFact } from "./attempt-reports";
import { acquireSandbox, type Held, letGo } from "./attempt-sandbox";
import type { BrowserDriver } from "./browser-driver";
import type { ScriptRun } from "./finish-task";
import type { BudgetVerdict } from "./model-caller";
import type {
  ChatRequest,
  ChatResult,
  MailboxTools,
  OutagePolicy,
  RunnerMetrics,
  TokenUsage,
  WorkspaceTools,
} from "./ports";
import { runAttempt, startTask } from "./run-attempt";

export type { InterruptReason, TaskDisposition, TaskReports, UsageFact };

export interface AcquiredBrowser {
  browserId: string;
  liveUrl?: string;
  cdpUrl: string;
}

export interface TaskLease {
  /** The step the previous attempt was acting on when it stopped, if it wrote one down. */
  previousPending: PendingStep | undefined;
  holds(pending?: PendingStep): Promise<boolean>;
  release(): Promise<void>;
}

export interface TaskWorkerDeps {
  runnerId: string;
  reports: TaskReports;
  /** The session's browser, with `settings` (the assignment's, a custom proxy's credentials filled in). */
  acquireBrowser(a: runner.TaskAssignment, settings: sessions.BrowserSettings | undefined): Promise<AcquiredBrowser>;
  connectBrowser(cdpUrl: string): Promise<BrowserDriver>;
  claimLease(taskId: string, attempt: number): Promise<TaskLease>;
  /** Calls `onStop` when the session's events say the task must end; returns the unsubscribe. */
  watchSession(sessionId: string, taskId: string, onStop: (reason: InterruptReason) => void): () => void;
  resolveRoute(model: string): ModelRoute;
  ownKey(projectId: string, provider: string): Promise<string | undefined>;
  complete(
    target: { route: ModelRoute; apiKey: string | undefined } & CallParams,
    request: ChatRequest,
  ): Promise<ChatResult>;
  checkBudget?(a: runner.TaskAssignment, estimate: TokenUsage): Promise<BudgetVerdict>;
  publishUsage(a: runner.TaskAssignment, usage: UsageFact): Promise<void>;
  storeScreenshot?(ref: string, jpeg: Uint8Array): Promise<string>;
  /** The file tools of the task's workspace; undefined when the assignment names none. */
  workspaceTools?(a: runner.TaskAssignment): WorkspaceTools | undefined;
  /** The mail tools of the session's temporary mailbox; undefined when the assignment names none. */
  mailboxTools?(a: runner.TaskAssignment): MailboxTools | undefined;
  /** Runs a code-mode script sandboxed, with the task's browser (its CDP URL) as the one thing it can reach. */
  runScript?(code: string, env: Record<string, string>, browserWsEndpoint: string): Promise<ScriptRun>;
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void; error(o: object, msg: string): void };
  now(): Date;
  maxSteps: number;
  maxAttempts: number;
  /** How long a dependency (browser-pool, sessions, billing, NATS, Postgres) may be away before the attempt fails. */
  outage: OutagePolicy;
  agent: AgentOptions;
  metrics: RunnerMetrics;
}

export interface RunningTask {
  assignment: runner.TaskAssignment;
  interrupt(reason: InterruptReason): void;
}

/**
 * Works one delivery of a task: the sandbox (lease, browser, "sandbox ready"), the task started with this attempt,
 * the model, the agent loop with a report per step, and the final report. A later attempt continues where the
 * earlier ones stopped (their recorded steps, the step they were acting on, the same browser when it is still there).
 * Every way it can end maps to an ack (done, or nothing left to do), a nak (hand back for another attempt) or abandon
 * (another runner owns the task now).
 */
export async function workTask(
  assignment: runner.TaskAssignment,
  attempt: number,
  deps: TaskWorkerDeps,
  onStart: (task: RunningTask) => () => void,
): Promise<TaskDisposition> {
  if (attempt > deps.maxAttempts) return failOutOfAttempts(assignment, attempt, deps);

  const { attempt: t, interrupt } = newAttempt(assignment, attempt, deps);
  const unregister = onStart({ assignment, interrupt });
  const unwatch = deps.watchSession(assignment.sessionId, assignment.taskId, interrupt);
  const held: Held = {};
  let disposition: TaskDisposition | undefined;
  try {
    disposition = await attemptTask(t, held);
    return disposition;
  } finally {
    unwatch();
    unregister();
    await letGo(held, disposition);
  }
}

/** The steps of one attempt; each can end it with a disposition. */
async function attemptTask(t: Attempt, held: Held): Promise<TaskDisposition> {
  try {
    const notReady = await acquireSandbox(t, held);
    if (notReady) return notReady;
    const sandbox = held as Required<Held>;
    // A session created without a task only needed its sandbox.
    if (!t.assignment.task.trim()) return { kind: "ack" };
    const reason = t.interrupted();
    if (reason) return dispositionFor(reason);
    const start = await startTask(t, sandbox);
    const model = await resolveModel(t);
    if (isDisposition(model)) return model;
    return await runAttempt(t, sandbox, model, start);
  } catch (err) {
    return dispositionOfFailure(t, err);
  }
}

/** Every attempt the task may have was used up: it (or, without a task, its sandbox) fails. */
async function failOutOfAttempts(
  a: runner.TaskAssignment,
  attempt: number,
  deps: TaskWorkerDeps,
): Promise<TaskDisposition> {
  const error = `The task failed after ${deps.maxAttempts} attempt${deps.maxAttempts > 1 ? "s" : ""}: the runner working on it stopped or could not finish`;
  deps.log.warn({ sessionId: a.sessionId, taskId: a.taskId, attempt }, "task ran out of attempts; failing it");
  if (a.task) await ignoreStale(settleLastUsage(a, deps));
  await ignoreStale(
    a.task
      ? deps.reports.taskFailed({ sessionId: a.sessionId, taskId: a.taskId, error })
      : deps.reports.sandboxFailed({ sessionId: a.sessionId, error }),
  );
  return { kind: "ack" };
}
