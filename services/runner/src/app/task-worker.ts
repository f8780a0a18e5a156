import type { runner } from "@bas/proto";
import { retryUnavailable } from "@bas/service-kit";
import type { ModelRoute } from "../domain/model-routes";
import { reasoningEffort } from "../domain/model-routes";
import { planResume } from "../domain/resume-plan";
import { createRedactor, redactDeep } from "../domain/secrets";
import type { PendingStep } from "../domain/step-memory";
import { titleOf } from "../domain/title";
import { type AgentOptions, type RecordedStep, runAgent } from "./agent-loop";
import {
  ignoreStale,
  recordUsage,
  reportStep,
  settleLastUsage,
  type TaskReports,
  type UsageFact,
} from "./attempt-reports";
import type { BrowserDriver } from "./browser-driver";
import { BrowserConnectError, BrowserGoneError } from "./browser-errors";
import type { ScriptRun } from "./finish-task";
import { type BudgetVerdict, createModelCaller } from "./model-caller";
import {
  type ChatRequest,
  type ChatResult,
  ModelError,
  type OutagePolicy,
  StaleAttemptError,
  SupersededAttemptError,
  type TokenUsage,
} from "./ports";

/** What the handler tells the work queue to do with the delivery. */
export type TaskDisposition = { kind: "ack" } | { kind: "nak"; delayMs?: number } | { kind: "abandon" };

/** Why a running task is interrupted from outside. */
export type InterruptReason = "task_stopped" | "session_ended" | "task_ended" | "handback";

export type { TaskReports, UsageFact };

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
  acquireBrowser(a: runner.TaskAssignment): Promise<AcquiredBrowser>;
  connectBrowser(cdpUrl: string): Promise<BrowserDriver>;
  claimLease(taskId: string, attempt: number): Promise<TaskLease>;
  /** Calls `onStop` when the session's events say the task must end; returns the unsubscribe. */
  watchSession(sessionId: string, taskId: string, onStop: (reason: InterruptReason) => void): () => void;
  resolveRoute(model: string): ModelRoute;
  ownKey(projectId: string, provider: string): Promise<string | undefined>;
  complete(
    target: { route: ModelRoute; apiKey: string | undefined; reasoningEffort?: string },
    request: ChatRequest,
  ): Promise<ChatResult>;
  checkBudget?(a: runner.TaskAssignment, estimate: TokenUsage): Promise<BudgetVerdict>;
  publishUsage(a: runner.TaskAssignment, usage: UsageFact): Promise<void>;
  storeScreenshot?(ref: string, jpeg: Uint8Array): Promise<string>;
  /** Runs a code-mode script sandboxed, with the task's browser (its CDP URL) as the one thing it can reach. */
  runScript?(code: string, env: Record<string, string>, browserWsEndpoint: string): Promise<ScriptRun>;
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void; error(o: object, msg: string): void };
  now(): Date;
  maxSteps: number;
  maxAttempts: number;
  /** How long a dependency (browser-pool, sessions, billing, NATS, Postgres) may be away before the attempt fails. */
  outage: OutagePolicy;
  agent: AgentOptions;
}

export interface RunningTask {
  assignment: runner.TaskAssignment;
  interrupt(reason: InterruptReason): void;
}

/**
 * Works one delivery of a task: browser, sandbox ready, task started (with the attempt), the agent loop with a
 * report per step, and the final report. A later attempt continues where the earlier ones stopped (their recorded
 * steps, the step they were acting on, the same browser when it is still there). Every way it can end maps to an
 * ack (done, or nothing left to do), a nak (hand back for another attempt) or abandon (another runner owns the task
 * now).
 */
export async function workTask(
  assignment: runner.TaskAssignment,
  attempt: number,
  deps: TaskWorkerDeps,
  onStart: (task: RunningTask) => () => void,
): Promise<TaskDisposition> {
  const a = assignment;
  const ids = { sessionId: a.sessionId, taskId: a.taskId, attempt };
  const { reports, log } = deps;

  if (attempt > deps.maxAttempts) {
    const error = `The task failed after ${deps.maxAttempts} attempt${deps.maxAttempts > 1 ? "s" : ""}: the runner working on it stopped or could not finish`;
    log.warn(ids, "task ran out of attempts; failing it");
    if (a.task) await ignoreStale(settleLastUsage(a, deps));
    await ignoreStale(
      a.task
        ? reports.taskFailed({ sessionId: a.sessionId, taskId: a.taskId, error })
        : reports.sandboxFailed({ sessionId: a.sessionId, error }),
    );
    return { kind: "ack" };
  }

  const controller = new AbortController();
  let reason: InterruptReason | undefined;
  const interrupt = (why: InterruptReason) => {
    reason ??= why;
    controller.abort(why);
  };
  const unregister = onStart({ assignment: a, interrupt });
  const unwatch = deps.watchSession(a.sessionId, a.taskId, interrupt);
  const waitOut = <T>(dependency: string, fn: () => Promise<T>, retryable?: (err: unknown) => boolean) =>
    retryUnavailable(fn, {
      graceMs: deps.outage.graceMs,
      signal: controller.signal,
      ...(retryable ? { retryable } : {}),
      onRetry: (err, { waitedMs }) => deps.outage.onWait?.(dependency, err, waitedMs),
    });
  let lease: TaskLease | undefined;
  let current: { acquired: AcquiredBrowser; browser: BrowserDriver } | undefined;
  /** The session's browser, connected; waits while browser-pool (or the browser's CDP endpoint) is away. */
  const openBrowser = () =>
    waitOut("browser-pool", async () => {
      const acquired = await deps.acquireBrowser(a);
      try {
        return { acquired, browser: await deps.connectBrowser(acquired.cdpUrl) };
      } catch (err) {
        throw new BrowserConnectError(`could not connect to browser ${acquired.browserId}`, { cause: err });
      }
    });
  const attemptTask = async (): Promise<TaskDisposition> => {
    try {
      // Any failure to claim is NATS not answering (the KV bucket exists once the runner started).
      lease = await waitOut(
        "NATS",
        () => deps.claimLease(a.taskId, attempt),
        () => true,
      );
      const held = lease;
      try {
        current = await openBrowser();
      } catch (err) {
        if (attempt < deps.maxAttempts && !reason) {
          log.warn({ ...ids, err }, "could not get the session's browser; handing the task back");
          return { kind: "nak", delayMs: 2_000 };
        }
        await ignoreStale(
          reports.sandboxFailed({
            sessionId: a.sessionId,
            error: `The browser could not be started: ${(err as Error).message}`,
          }),
        );
        return { kind: "ack" };
      }
      await reports.sandboxReady({
        sessionId: a.sessionId,
        browserId: current.acquired.browserId,
        ...(current.acquired.liveUrl ? { liveUrl: current.acquired.liveUrl } : {}),
      });
      // A session created without a task only needed its sandbox.
      if (!a.task.trim()) return { kind: "ack" };
      if (reason) return dispositionFor(reason);

      await reports.taskStarted({ sessionId: a.sessionId, taskId: a.taskId, title: titleOf(a.task), attempt });
      // From here on, the sessions service refuses steps of earlier attempts: the progress below is complete.
      const progress = await settleLastUsage(a, deps);
      const resume = planResume({
        attempt,
        lastStep: progress.lastStep,
        agentRecords: progress.steps.map((s) => s.agentRecord),
        ...(held.previousPending ? { pending: held.previousPending } : {}),
        browserId: current.acquired.browserId,
      });
      if (resume.interrupted) await reportStep(a, attempt, resume.interrupted, reports);
      log.info(
        { ...ids, model: a.model, fromStep: resume.start.nextStep, interruptedStep: resume.interrupted?.step },
        resume.start.nextStep > 1 ? "task resumed" : "task started",
      );

      const route = deps.resolveRoute(a.model);
      const apiKey = a.useOwnKey
        ? await waitOut("Postgres", () => deps.ownKey(a.projectId, route.provider))
        : route.apiKey;
      if (a.useOwnKey && !apiKey) {
        const error = `use_own_key is set but the project has no provider key stored for "${route.provider}"`;
        await ignoreStale(reports.taskFailed({ sessionId: a.sessionId, taskId: a.taskId, error }));
        return { kind: "ack" };
      }

      let secrets: Record<string, string> | undefined;
      const secretValues = async () => {
        secrets ??= a.sensitiveDataKeys.length
          ? await reports.taskSecrets({ sessionId: a.sessionId, taskId: a.taskId })
          : {};
        return secrets;
      };
      // The redactor must know the values before the first prompt: the task text or a page could contain them.
      const redactor = createRedactor(a.sensitiveDataKeys.length ? await secretValues() : {});

      const target = { route, apiKey, ...withEffort(route, a.thinkingLevel) };
      const model = createModelCaller({
        complete: (request) => deps.complete(target, request),
        ...(deps.checkBudget ? { checkBudget: (estimate: TokenUsage) => deps.checkBudget!(a, estimate) } : {}),
        recordUsage: (usage, call) => recordUsage(a, attempt, usage, call, deps),
        redact: redactor,
      });

      const recordStep = async (step: RecordedStep) => {
        let screenshotRef: string | undefined;
        if (step.screenshot && deps.storeScreenshot) {
          const ref = `screenshot-${a.taskId}-${attempt}-${step.step}.jpg`;
          screenshotRef = await deps.storeScreenshot(ref, step.screenshot).catch((err) => {
            log.warn({ ...ids, err }, "could not store the step screenshot");
            return undefined;
          });
        }
        const memory = { ...step.memory, browserId: current!.acquired.browserId };
        await reportStep(a, attempt, { ...step, memory }, reports, screenshotRef);
      };

      const outcome = await runAgent(
        {
          task: a.task,
          mode: { ...(isSchema(a.outputSchema) ? { outputSchema: a.outputSchema } : {}), codeMode: a.codeMode },
          secretKeys: a.sensitiveDataKeys,
          maxSteps: deps.maxSteps,
          vision: route.vision,
        },
        {
          browser: current.browser,
          model,
          secrets: secretValues,
          redact: redactor,
          recordStep,
          beforeActing: async (planned) => {
            if (!(await holdsLease(held, log, { ...planned, browserId: current!.acquired.browserId }))) {
              throw new LeaseLostError();
            }
          },
          reconnect: async () => {
            const lost = current!;
            log.warn({ ...ids, browserId: lost.acquired.browserId }, "lost the browser connection; connecting again");
            await lost.browser.disconnect().catch(() => undefined);
            current = await openBrowser();
            const fresh = current.acquired.browserId !== lost.acquired.browserId;
            if (fresh) log.warn({ ...ids, browserId: current.acquired.browserId }, "the task goes on in a new browser");
            return { browser: current.browser, fresh };
          },
          signal: controller.signal,
          now: deps.now,
          ...(deps.runScript ? { runScript: (code, env) => deps.runScript!(code, env, current!.acquired.cdpUrl) } : {}),
          options: deps.agent,
        },
        resume.start,
      );
      if (outcome.kind === "stopped") {
        log.info({ ...ids, reason }, "task interrupted");
        return dispositionFor(reason ?? "task_stopped");
      }
      if (!(await holdsLease(held, log))) throw new LeaseLostError();
      await reports.taskCompleted({
        sessionId: a.sessionId,
        taskId: a.taskId,
        output: redactDeep(outcome.output, redactor),
        success: outcome.success,
        summary: outcome.summary,
      });
      log.info({ ...ids, success: outcome.success, steps: outcome.steps }, "task completed");
      return { kind: "ack" };
    } catch (err) {
      if (err instanceof LeaseLostError || err instanceof SupersededAttemptError) {
        log.warn(ids, "another runner took this task over; stopping this attempt");
        return { kind: "abandon" };
      }
      if (err instanceof StaleAttemptError) {
        log.info({ ...ids, why: err.message }, "the task is no longer current; stopping");
        return { kind: "ack" };
      }
      if (reason) return dispositionFor(reason);
      const error =
        err instanceof ModelError
          ? `The model call failed: ${err.message}`
          : err instanceof BrowserGoneError || err instanceof BrowserConnectError
            ? "The browser stopped unexpectedly"
            : "The runner hit an internal error";
      log.error({ ...ids, err }, "task attempt failed");
      // The model's errors were already retried by the client; anything else (a dependency away for longer than the
      // outage grace, the browser gone) may go better in a fresh attempt, as long as there is one left. It continues
      // where this one stopped.
      if (!(err instanceof ModelError) && attempt < deps.maxAttempts) {
        return { kind: "nak", delayMs: 2_000 };
      }
      await ignoreStale(reports.taskFailed({ sessionId: a.sessionId, taskId: a.taskId, error }));
      return { kind: "ack" };
    }
  };
  let disposition: TaskDisposition | undefined;
  try {
    disposition = await attemptTask();
    return disposition;
  } finally {
    unwatch();
    unregister();
    await current?.browser.disconnect().catch(() => undefined);
    // The lease outlives an attempt that hands the task on: it says what that attempt was doing.
    if (disposition?.kind === "ack") await lease?.release().catch(() => undefined);
  }
}

class LeaseLostError extends Error {
  override name = "LeaseLostError";
}

function dispositionFor(reason: InterruptReason): TaskDisposition {
  // Handed back on shutdown: another runner continues. Stopped or ended: nothing more to do.
  return reason === "handback" ? { kind: "nak" } : { kind: "ack" };
}

async function holdsLease(lease: TaskLease, log: TaskWorkerDeps["log"], pending?: PendingStep): Promise<boolean> {
  try {
    return await lease.holds(pending);
  } catch (err) {
    // NATS briefly away: not proof of a takeover. The sessions service refuses steps of a superseded attempt.
    log.warn({ err }, "could not refresh the task lease");
    return true;
  }
}

function isSchema(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

function withEffort(route: ModelRoute, thinkingLevel: string | undefined): { reasoningEffort?: string } {
  const effort = reasoningEffort(route, thinkingLevel);
  return effort ? { reasoningEffort: effort } : {};
}
