import type { sessions } from "@bas/proto";
import { type HandlerLog, unaryService } from "@bas/service-kit";
import { InvalidArgumentError } from "@bas/errors";
import type { RunnerCommand, RunnerReports } from "../../app/runner-reports";
import type { StepMessageInput } from "../../domain/commands";
import type { JsonValue } from "../../domain/events";
import { sessionIdOf } from "./requests";

const invalid = (field: string, message: string) => new InvalidArgumentError(message, { field: [field] });

function taskIdOf(value: string): string {
  if (!value) throw invalid("task_id", "task_id is required");
  return value;
}

function stepMessage(m: sessions.StepMessage, i: number): StepMessageInput {
  if (m.role !== "human" && m.role !== "ai") throw invalid(`messages[${i}].role`, "role must be human or ai");
  if (!m.type) throw invalid(`messages[${i}].type`, "type is required");
  return { role: m.role, type: m.type, data: m.data, summary: m.summary ?? null, hidden: m.hidden };
}

/** The agent's record rides in the step's event: bounded, so an event stays far below NATS's message limit. */
const MAX_AGENT_RECORD_CHARS = 128 * 1024;

function agentRecordOf(value: string | undefined): string | null {
  if (!value) return null;
  if (value.length > MAX_AGENT_RECORD_CHARS) {
    throw invalid("agent_record", `agent_record must be at most ${MAX_AGENT_RECORD_CHARS} characters`);
  }
  return value;
}

function count(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw invalid(field, `${field} must not be negative`);
  return value;
}

function tokens(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw invalid(field, `${field} must be a non-negative integer`);
  return value;
}

/** The runner-facing `RunnerReports` service. Every report names its task; a stale one is FAILED_PRECONDITION. */
export function runnerReportsServer(reports: RunnerReports, log?: HandlerLog): sessions.RunnerReportsServer {
  const report = async (sessionId: string, command: RunnerCommand) => {
    await reports.report(sessionIdOf(sessionId), command);
    return {};
  };
  return unaryService(
    {
      sandboxReady: async (req: sessions.SandboxReadyRequest) =>
        report(req.sessionId, { type: "ReportSandboxReady", browserId: req.browserId }),
      sandboxFailed: async (req: sessions.SandboxFailedRequest) =>
        report(req.sessionId, { type: "ReportSandboxFailed", error: req.error || "the sandbox failed" }),
      taskStarted: async (req: sessions.TaskStartedRequest) =>
        report(req.sessionId, {
          type: "ReportTaskStarted",
          taskId: taskIdOf(req.taskId),
          title: req.title ?? null,
          attempt: req.attempt,
        }),
      stepRecorded: async (req: sessions.StepRecordedRequest) => {
        if (req.step < 0) throw invalid("step", "step must not be negative");
        return report(req.sessionId, {
          type: "ReportStep",
          taskId: taskIdOf(req.taskId),
          step: req.step,
          summary: req.summary,
          screenshotRef: req.screenshotRef || null,
          messages: req.messages.map(stepMessage),
          attempt: count(req.attempt ?? 0, "attempt"),
          agentRecord: agentRecordOf(req.agentRecord),
        });
      },
      taskCompleted: async (req: sessions.TaskCompletedRequest) =>
        report(req.sessionId, {
          type: "ReportTaskCompleted",
          taskId: taskIdOf(req.taskId),
          output: (req.output ?? null) as JsonValue,
          success: req.success,
          summary: req.summary ?? null,
          ...(req.judgement !== undefined ? { judgement: req.judgement as JsonValue } : {}),
        }),
      taskFailed: async (req: sessions.TaskFailedRequest) =>
        report(req.sessionId, {
          type: "ReportTaskFailed",
          taskId: taskIdOf(req.taskId),
          error: req.error || "unknown",
        }),
      usageReported: async (req: sessions.UsageReportedRequest) =>
        report(req.sessionId, {
          type: "ReportUsage",
          taskId: taskIdOf(req.taskId),
          inputTokens: tokens(req.inputTokens, "input_tokens"),
          outputTokens: tokens(req.outputTokens, "output_tokens"),
          // Without a usage id: an older runner reporting the task's totals.
          call: req.usageId
            ? {
                usageId: req.usageId,
                attempt: count(req.attempt ?? 0, "attempt"),
                number: count(req.call ?? 0, "call"),
              }
            : null,
        }),
      getTaskProgress: async (req: sessions.GetTaskProgressRequest): Promise<sessions.TaskProgress> => {
        const progress = await reports.taskProgress(sessionIdOf(req.sessionId), taskIdOf(req.taskId));
        const last = progress.lastUsage;
        return {
          attempt: progress.attempt,
          lastStep: progress.lastStep,
          steps: progress.steps,
          inputTokens: progress.inputTokens,
          outputTokens: progress.outputTokens,
          ...(last
            ? {
                lastUsage: {
                  usageId: last.usageId,
                  inputTokens: last.inputTokens,
                  outputTokens: last.outputTokens,
                  occurredAt: new Date(last.occurredAt),
                },
              }
            : {}),
        };
      },
      recordingSaved: async (req: sessions.RecordingSavedRequest) => {
        if (!req.recordingRef) throw invalid("recording_ref", "recording_ref is required");
        return report(req.sessionId, { type: "ReportRecording", ref: req.recordingRef });
      },
      getTaskSecrets: async (req: sessions.GetTaskSecretsRequest): Promise<sessions.TaskSecrets> => {
        const { values, proxyCredentials } = await reports.taskSecrets(
          sessionIdOf(req.sessionId),
          taskIdOf(req.taskId),
        );
        return { values, ...(proxyCredentials ? { proxyCredentials } : {}) };
      },
    },
    log,
  );
}
