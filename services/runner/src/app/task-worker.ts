import type { runner, sessions } from "@bas/proto";
import type { ModelRoute } from "../domain/model-routes";
import { reasoningEffort } from "../domain/model-routes";
import { createRedactor, redactDeep } from "../domain/secrets";
import { titleOf } from "../domain/title";
import { type AgentOptions, type RecordedStep, runAgent } from "./agent-loop";
import type { BrowserDriver } from "./browser-driver";
import { BrowserGoneError } from "./browser-errors";
import type { ScriptRun } from "./finish-task";
import { type BudgetVerdict, createModelCaller } from "./model-caller";
import { type ChatRequest, type ChatResult, ModelError, StaleAttemptError, type TokenUsage } from "./ports";

/** What the handler tells the work queue to do with the delivery. */
export type TaskDisposition = { kind: "ack" } | { kind: "nak"; delayMs?: number } | { kind: "abandon" };

/** Why a running task is interrupted from outside. */
export type InterruptReason = "task_stopped" | "session_ended" | "task_ended" | "handback";

export interface TaskReports {
  sandboxReady(req: sessions.SandboxReadyRequest): Promise<void>;
  sandboxFailed(req: sessions.SandboxFailedRequest): Promise<void>;
  taskStarted(req: sessions.TaskStartedRequest): Promise<void>;
  stepRecorded(req: sessions.StepRecordedRequest): Promise<void>;
  taskCompleted(req: sessions.TaskCompletedRequest): Promise<void>;
  taskFailed(req: sessions.TaskFailedRequest): Promise<void>;
  usageReported(req: sessions.UsageReportedRequest): Promise<void>;
  taskSecrets(req: sessions.GetTaskSecretsRequest): Promise<Record<string, string>>;
}

export interface TaskWorkerDeps {
  runnerId: string;
  reports: TaskReports;
  acquireBrowser(a: runner.TaskAssignment): Promise<{ browserId: string; liveUrl?: string; cdpUrl: string }>;
  connectBrowser(cdpUrl: string): Promise<BrowserDriver>;
  claimLease(taskId: string, attempt: number): Promise<{ holds(): Promise<boolean>; release(): Promise<void> }>;
  /** Calls `onStop` when the session's events say the task must end; returns the unsubscribe. */
  watchSession(sessionId: string, taskId: string, onStop: (reason: InterruptReason) => void): () => void;
  resolveRoute(model: string): ModelRoute;
  ownKey(projectId: string, provider: string): Promise<string | undefined>;
  complete(
    target: { route: ModelRoute; apiKey: string | undefined; reasoningEffort?: string },
    request: ChatRequest,
  ): Promise<ChatResult>;
  checkBudget?(a: runner.TaskAssignment, estimate: TokenUsage): Promise<BudgetVerdict>;
  publishUsage(a: runner.TaskAssignment, usage: TokenUsage): Promise<void>;
  storeScreenshot?(ref: string, jpeg: Uint8Array): Promise<string>;
  runScript?(code: string, env: Record<string, string>): Promise<ScriptRun>;
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void; error(o: object, msg: string): void };
  now(): Date;
  maxSteps: number;
  maxAttempts: number;
  agent: AgentOptions;
}

export interface RunningTask {
  assignment: runner.TaskAssignment;
  interrupt(reason: InterruptReason): void;
}

/**
 * Works one delivery of a task: browser, sandbox ready, task started (with the attempt), the agent loop with a
 * report per step, and the final report. Every way it can end maps to an ack (done, or nothing left to do), a nak
 * (hand back for another attempt) or abandon (another runner owns the task now).
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
  let lease: Awaited<ReturnType<TaskWorkerDeps["claimLease"]>> | undefined;
  let browser: BrowserDriver | undefined;
  try {
    lease = await deps.claimLease(a.taskId, attempt);
    const held = lease;
    let acquired: Awaited<ReturnType<TaskWorkerDeps["acquireBrowser"]>>;
    try {
      acquired = await deps.acquireBrowser(a);
      browser = await deps.connectBrowser(acquired.cdpUrl);
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
      browserId: acquired.browserId,
      ...(acquired.liveUrl ? { liveUrl: acquired.liveUrl } : {}),
    });
    // A session created without a task only needed its sandbox.
    if (!a.task.trim()) return { kind: "ack" };
    if (reason) return dispositionFor(reason);

    await reports.taskStarted({ sessionId: a.sessionId, taskId: a.taskId, title: titleOf(a.task), attempt });
    log.info({ ...ids, model: a.model }, "task started");

    const route = deps.resolveRoute(a.model);
    const apiKey = a.useOwnKey ? await deps.ownKey(a.projectId, route.provider) : route.apiKey;
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
      recordUsage: async (usage, totals) => {
        await deps.publishUsage(a, usage);
        await reports.usageReported({
          sessionId: a.sessionId,
          taskId: a.taskId,
          inputTokens: totals.inputTokens,
          outputTokens: totals.outputTokens,
        });
      },
      redact: redactor,
    });

    const recordStep = async (step: RecordedStep) => {
      if (!(await holdsLease(held, log))) throw new LeaseLostError();
      let screenshotRef: string | undefined;
      if (step.screenshot && deps.storeScreenshot) {
        const ref = `screenshot-${a.taskId}-${attempt}-${step.step}.jpg`;
        screenshotRef = await deps.storeScreenshot(ref, step.screenshot).catch((err) => {
          log.warn({ ...ids, err }, "could not store the step screenshot");
          return undefined;
        });
      }
      await reports.stepRecorded({
        sessionId: a.sessionId,
        taskId: a.taskId,
        step: step.step,
        summary: step.summary,
        messages: step.messages.map((m) => ({
          role: m.role,
          type: m.type,
          data: m.data,
          hidden: m.hidden,
          ...(m.summary ? { summary: m.summary } : {}),
        })),
        ...(screenshotRef ? { screenshotRef } : {}),
      });
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
        browser,
        model,
        secrets: secretValues,
        redact: redactor,
        recordStep,
        signal: controller.signal,
        now: deps.now,
        ...(deps.runScript ? { runScript: deps.runScript } : {}),
        options: deps.agent,
      },
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
    if (err instanceof LeaseLostError) {
      log.warn(ids, "another runner took this task over; stopping this attempt");
      return { kind: "abandon" };
    }
    if (err instanceof StaleAttemptError) {
      log.info({ ...ids, why: err.message }, "the task is no longer current; stopping");
      return { kind: "ack" };
    }
    if (reason === "handback") return { kind: "nak" };
    if (reason) return dispositionFor(reason);
    const error =
      err instanceof ModelError
        ? `The model call failed: ${err.message}`
        : err instanceof BrowserGoneError
          ? "The browser stopped unexpectedly"
          : "The runner hit an internal error";
    log.error({ ...ids, err }, "task attempt failed");
    // The model's errors were already retried by the client; anything else (sessions or NATS away, the browser gone)
    // may go better in a fresh attempt, as long as there is one left.
    if (!(err instanceof ModelError) && attempt < deps.maxAttempts) return { kind: "nak", delayMs: 2_000 };
    await ignoreStale(reports.taskFailed({ sessionId: a.sessionId, taskId: a.taskId, error }));
    return { kind: "ack" };
  } finally {
    unwatch();
    unregister();
    await browser?.disconnect().catch(() => undefined);
    if (reason !== "handback") await lease?.release().catch(() => undefined);
  }
}

class LeaseLostError extends Error {
  override name = "LeaseLostError";
}

function dispositionFor(reason: InterruptReason): TaskDisposition {
  // Handed back on shutdown: another runner continues. Stopped or ended: nothing more to do.
  return reason === "handback" ? { kind: "nak" } : { kind: "ack" };
}

async function holdsLease(lease: { holds(): Promise<boolean> }, log: TaskWorkerDeps["log"]): Promise<boolean> {
  try {
    return await lease.holds();
  } catch (err) {
    // NATS briefly away: not proof of a takeover. The sessions service still refuses reports of an ended task.
    log.warn({ err }, "could not refresh the task lease");
    return true;
  }
}

async function ignoreStale(report: Promise<void>): Promise<void> {
  try {
    await report;
  } catch (err) {
    if (!(err instanceof StaleAttemptError)) throw err;
  }
}

function isSchema(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

function withEffort(route: ModelRoute, thinkingLevel: string | undefined): { reasoningEffort?: string } {
  const effort = reasoningEffort(route, thinkingLevel);
  return effort ? { reasoningEffort: effort } : {};
}
