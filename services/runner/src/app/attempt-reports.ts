import { randomUUID } from "node:crypto";
import type { runner, sessions } from "@bas/proto";
import { encodeMemory, type FinishedStep } from "../domain/step-memory";
import { StaleAttemptError, type TokenUsage } from "./ports";

/** The sessions service's runner-facing API, as an attempt uses it. */
export interface TaskReports {
  sandboxReady(req: sessions.SandboxReadyRequest): Promise<void>;
  sandboxFailed(req: sessions.SandboxFailedRequest): Promise<void>;
  taskStarted(req: sessions.TaskStartedRequest): Promise<void>;
  stepRecorded(req: sessions.StepRecordedRequest): Promise<void>;
  taskCompleted(req: sessions.TaskCompletedRequest): Promise<void>;
  taskFailed(req: sessions.TaskFailedRequest): Promise<void>;
  usageReported(req: sessions.UsageReportedRequest): Promise<void>;
  taskProgress(req: sessions.GetTaskProgressRequest): Promise<sessions.TaskProgress>;
  /** The task's sensitiveData values and its custom proxy's credentials, while the task is current. */
  taskSecrets(req: sessions.GetTaskSecretsRequest): Promise<sessions.TaskSecrets>;
}

/** One model call's usage as billing gets it: the id makes a repeat count once. */
export interface UsageFact extends TokenUsage {
  id: string;
  occurredAt?: Date;
}

/** What reporting needs: the sessions service, and billing's usage stream. */
export interface ReportingDeps {
  reports: TaskReports;
  publishUsage(a: runner.TaskAssignment, usage: UsageFact): Promise<void>;
}

/**
 * Reports one model call: first to the sessions service (the task's tokens), then to billing (the charge), under
 * one usage id. A new attempt republishes the last call the sessions service has (`settleLastUsage`), so the two
 * never disagree, whatever dies in between. A call the sessions service cannot take (its session was deleted) is
 * still charged.
 */
export async function recordUsage(
  a: runner.TaskAssignment,
  attempt: number,
  usage: TokenUsage,
  call: number,
  deps: ReportingDeps,
): Promise<void> {
  const id = randomUUID();
  const report = deps.reports.usageReported({
    sessionId: a.sessionId,
    taskId: a.taskId,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    usageId: id,
    attempt,
    call,
  });
  try {
    await report;
  } catch (err) {
    if (err instanceof StaleAttemptError) await deps.publishUsage(a, { ...usage, id });
    throw err;
  }
  await deps.publishUsage(a, { ...usage, id });
}

/** The task's progress; its last model call is published again (billing counts an id once) in case it was not. */
export async function settleLastUsage(a: runner.TaskAssignment, deps: ReportingDeps): Promise<sessions.TaskProgress> {
  const progress = await deps.reports.taskProgress({ sessionId: a.sessionId, taskId: a.taskId });
  const last = progress.lastUsage;
  if (last) {
    await deps.publishUsage(a, {
      id: last.usageId,
      inputTokens: last.inputTokens,
      outputTokens: last.outputTokens,
      ...(last.occurredAt ? { occurredAt: last.occurredAt } : {}),
    });
  }
  return progress;
}

export async function reportStep(
  a: runner.TaskAssignment,
  attempt: number,
  step: FinishedStep,
  reports: TaskReports,
  screenshotRef?: string,
): Promise<void> {
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
    attempt,
    agentRecord: encodeMemory(step.memory),
  });
}

/** Runs a report whose refusal as stale (the task ended meanwhile) changes nothing. */
export async function ignoreStale(report: Promise<unknown>): Promise<void> {
  try {
    await report;
  } catch (err) {
    if (!(err instanceof StaleAttemptError)) throw err;
  }
}
