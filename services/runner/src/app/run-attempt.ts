import type { Judgement, NoJudgement } from "../domain/judge";
import { planResume, type ResumePlan } from "../domain/resume-plan";
import { redactDeep } from "../domain/secrets";
import type { PendingStep } from "../domain/step-memory";
import { titleOf } from "../domain/title";
import { type Attempt, dispositionFor, LeaseLostError, type TaskDisposition } from "./attempt";
import type { AttemptModel } from "./attempt-model";
import { reportStep, settleLastUsage } from "./attempt-reports";
import { type Held, openBrowser } from "./attempt-sandbox";
import { type RecordedStep, runAgent } from "./agent-loop";
import { judgeRun } from "./judge-run";
import type { TaskLease, TaskWorkerDeps } from "./task-worker";

/**
 * Tells the sessions service the task started (with this attempt) and plans where to continue: after the steps the
 * earlier attempts recorded, with the step they were acting on reported as interrupted.
 */
export async function startTask(t: Attempt, held: Required<Held>): Promise<ResumePlan["start"]> {
  const { assignment: a, deps } = t;
  await deps.reports.taskStarted({
    sessionId: a.sessionId,
    taskId: a.taskId,
    title: titleOf(a.task),
    attempt: t.attempt,
  });
  // From here on, the sessions service refuses steps of earlier attempts: the progress below is complete.
  const progress = await settleLastUsage(a, deps);
  const resume = planResume({
    attempt: t.attempt,
    lastStep: progress.lastStep,
    agentRecords: progress.steps.map((s) => s.agentRecord),
    ...(held.lease.previousPending ? { pending: held.lease.previousPending } : {}),
    browserId: held.browser.acquired.browserId,
  });
  if (resume.interrupted) await reportStep(a, t.attempt, resume.interrupted, deps.reports);
  deps.log.info(
    { ...t.ids, model: a.model, fromStep: resume.start.nextStep, interruptedStep: resume.interrupted?.step },
    resume.start.nextStep > 1 ? "task resumed" : "task started",
  );
  return resume.start;
}

/** Runs the agent loop from `start`, one report per step, and reports the outcome. */
export async function runAttempt(
  t: Attempt,
  held: Required<Held>,
  { route, model, redactor, secretValues }: AttemptModel,
  start: ResumePlan["start"],
): Promise<TaskDisposition> {
  const { assignment: a, deps } = t;
  const { log } = deps;
  const recordStep = async (step: RecordedStep) => {
    let screenshotRef: string | undefined;
    if (step.screenshot && deps.storeScreenshot) {
      const ref = `screenshot-${a.taskId}-${t.attempt}-${step.step}.jpg`;
      screenshotRef = await deps.storeScreenshot(ref, step.screenshot).catch((err) => {
        log.warn({ ...t.ids, err }, "could not store the step screenshot");
        return undefined;
      });
    }
    const memory = { ...step.memory, browserId: held.browser.acquired.browserId };
    await reportStep(a, t.attempt, { ...step, memory }, deps.reports, screenshotRef);
  };

  const workspace = deps.workspaceTools?.(a);
  const mailbox = deps.mailboxTools?.(a);
  const outcome = await runAgent(
    {
      task: a.task,
      earlierTurns: a.earlierTurns,
      mode: { ...(isSchema(a.outputSchema) ? { outputSchema: a.outputSchema } : {}), codeMode: a.codeMode },
      secretKeys: a.sensitiveDataKeys,
      secretDomains: Object.fromEntries(Object.entries(a.secretDomains ?? {}).map(([k, v]) => [k, v.domains])),
      allowedDomains: a.browser?.allowedDomains ?? [],
      ...(a.inboxEmail ? { inboxEmail: a.inboxEmail } : {}),
      attachedFiles: a.attachedFiles ?? [],
      maxSteps: deps.maxSteps,
      vision: route.vision,
    },
    {
      browser: held.browser.browser,
      model,
      secrets: secretValues,
      redact: redactor,
      recordStep,
      beforeActing: async (planned) => {
        if (!(await holdsLease(held.lease, log, { ...planned, browserId: held.browser.acquired.browserId }))) {
          throw new LeaseLostError();
        }
      },
      reconnect: async () => {
        const lost = held.browser;
        log.warn({ ...t.ids, browserId: lost.acquired.browserId }, "lost the browser connection; connecting again");
        await lost.browser.disconnect().catch(() => undefined);
        held.browser = await openBrowser(t);
        const fresh = held.browser.acquired.browserId !== lost.acquired.browserId;
        if (fresh)
          log.warn({ ...t.ids, browserId: held.browser.acquired.browserId }, "the task goes on in a new browser");
        return { browser: held.browser.browser, fresh };
      },
      signal: t.signal,
      now: deps.now,
      ...(deps.runScript ? { runScript: (code, env) => deps.runScript!(code, env, held.browser.acquired.cdpUrl) } : {}),
      options: deps.agent,
      metrics: deps.metrics,
      ...(workspace ? { workspace } : {}),
      ...(mailbox ? { mailbox } : {}),
    },
    start,
  );
  const interrupted = () => {
    const reason = t.interrupted();
    log.info({ ...t.ids, reason }, "task interrupted");
    return dispositionFor(reason ?? "task_stopped");
  };
  if (outcome.kind === "stopped") return interrupted();
  const output = redactDeep(outcome.output, redactor);
  let judgement: Judgement | NoJudgement | undefined;
  if (a.judge) {
    // Before the completion is reported: the run is terminal only with the judge's tokens in its costs.
    const input = { task: a.task, context: a.judge.context, ...outcome, output };
    try {
      judgement = await judgeRun(model, input, t.signal);
    } catch (err) {
      if (t.signal.aborted) return interrupted();
      throw err;
    }
  }
  if (!(await holdsLease(held.lease, log))) throw new LeaseLostError();
  await deps.reports.taskCompleted({
    sessionId: a.sessionId,
    taskId: a.taskId,
    output,
    success: outcome.success,
    summary: outcome.summary,
    ...(judgement ? { judgement: redactDeep(judgement, redactor) } : {}),
  });
  log.info({ ...t.ids, success: outcome.success, steps: outcome.steps, verdict: judgement?.verdict }, "task completed");
  return { kind: "ack" };
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
