import { fold } from "@bas/event-store";
import { IllegalStateError, InvalidArgumentError, NotFoundError } from "@bas/errors";
import Ajv, { type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import type { SessionCommand } from "../domain/commands";
import { sessionDecider } from "../domain/decider";
import type { JsonValue } from "../domain/events";
import { type TaskProgress, taskProgress } from "../domain/task-progress";
import type { SecretsVault, TaskSecrets } from "./ports";
import type { SessionCommands } from "./session-commands";

/** The commands a runner may send about the session it works. */
export type RunnerCommand = Extract<
  SessionCommand,
  {
    type:
      | "ReportSandboxReady"
      | "ReportSandboxFailed"
      | "ReportTaskStarted"
      | "ReportStep"
      | "ReportTaskCompleted"
      | "ReportTaskFailed"
      | "ReportUsage"
      | "ReportRecording";
  }
>;

const MAX_CACHED_SCHEMAS = 200;

/** Checks structured outputs against the task's outputSchema; schemas compile once. */
function createSchemaCheck() {
  const ajv = new Ajv({ strict: false, allErrors: false });
  addFormats(ajv);
  const compiled = new Map<string, ValidateFunction | null>();
  return (schema: JsonValue, output: JsonValue): string | null => {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (validate === undefined) {
      try {
        validate = ajv.compile(schema as object);
      } catch {
        // The gateway only accepts schemas that compile; one that does not (another draft) is not enforced here.
        validate = null;
      }
      if (compiled.size >= MAX_CACHED_SCHEMAS) compiled.delete(compiled.keys().next().value as string);
      compiled.set(key, validate);
    }
    if (!validate || validate(output)) return null;
    return ajv.errorsText(validate.errors, { dataVar: "output" });
  };
}

/** Handles the runner's progress reports and serves its task's secrets. */
export function createRunnerReports(commands: SessionCommands, vault: SecretsVault) {
  const problemWith = createSchemaCheck();

  async function checkStructuredOutput(
    sessionId: string,
    command: Extract<RunnerCommand, { type: "ReportTaskCompleted" }>,
  ) {
    if (command.output === null) return;
    const state = await commands.load(sessionId);
    if (state.status === "none" || state.codeMode || state.outputSchema === null) return;
    if (state.task?.id !== command.taskId) return; // the decider refuses it or treats it as a retry
    const problem = problemWith(state.outputSchema, command.output);
    if (problem) {
      throw new InvalidArgumentError(`output does not conform to the outputSchema: ${problem}`, { field: ["output"] });
    }
  }

  return {
    async report(sessionId: string, command: RunnerCommand): Promise<void> {
      if (command.type === "ReportTaskCompleted") await checkStructuredOutput(sessionId, command);
      await commands.execute(sessionId, command);
    },

    /** What earlier attempts of the session's current task did; a stale runner gets nothing. */
    async taskProgress(sessionId: string, taskId: string): Promise<TaskProgress> {
      const events = await commands.events(sessionId);
      const state = fold(sessionDecider, events);
      if (state.status === "none") throw new NotFoundError("Session not found");
      if (state.deleted || state.task?.id !== taskId) {
        throw new IllegalStateError(`task ${taskId} is not the session's current task`);
      }
      return taskProgress(events, taskId);
    },

    /** Only while the task is the session's current one: a stale runner gets nothing. */
    async taskSecrets(sessionId: string, taskId: string): Promise<TaskSecrets> {
      const state = await commands.load(sessionId);
      if (state.status === "none") throw new NotFoundError("Session not found");
      if (state.deleted || state.task?.id !== taskId) {
        throw new IllegalStateError(`task ${taskId} is not the session's current task`);
      }
      return vault.get(sessionId, taskId);
    },
  };
}

export type RunnerReports = ReturnType<typeof createRunnerReports>;
