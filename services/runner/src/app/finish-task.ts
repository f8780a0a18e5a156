import { clip } from "../domain/clip";
import type { DoneAction } from "../domain/actions";
import { createOutputValidator, type OutputCheck } from "../domain/output-schema";
import { replayScript, secretEnvName } from "../domain/replay-script";
import { type Redactor, redactDeep } from "../domain/secrets";
import type { TraceEntry } from "./browser-driver";

export interface ScriptRun {
  ok: boolean;
  output: unknown;
  error?: string;
}

export interface FinishDeps {
  /** Runs a code-mode script sandboxed against the task's browser; absent = the script is returned without being run. */
  runScript?(code: string, env: Record<string, string>): Promise<ScriptRun>;
  redact: Redactor;
  options: { schemaRetries: number };
}

export interface FinishContext {
  task: {
    task: string;
    mode: { outputSchema?: Record<string, unknown>; codeMode?: boolean };
    secretKeys: readonly string[];
  };
  trace: readonly TraceEntry[];
  /** Non-conforming answers so far. */
  schemaFailures: number;
  secrets(): Promise<Record<string, string>>;
}

export type FinishResult =
  | { kind: "retry"; note: string }
  | { kind: "final"; success: boolean; output: unknown; text: string; summary: string };

const validators = new WeakMap<object, (value: unknown) => OutputCheck>();

function validatorFor(schema: Record<string, unknown>) {
  let validate = validators.get(schema);
  if (!validate) {
    validate = createOutputValidator(schema);
    validators.set(schema, validate);
  }
  return validate;
}

/** Turns the model's `done` into the task's output by mode, or into a correction request (schema mismatch). */
export async function finishTask(done: DoneAction, ctx: FinishContext, deps: FinishDeps): Promise<FinishResult> {
  const { mode } = ctx.task;
  const text = done.text.trim();
  const summary = done.success ? "Task completed" : `Task ended without success${text ? `: ${clip(text, 150)}` : ""}`;

  if (mode.outputSchema) {
    const check = validatorFor(mode.outputSchema)(done.data);
    if (!check.ok) {
      if (ctx.schemaFailures < deps.options.schemaRetries) {
        return {
          kind: "retry",
          note: `Your done output does not match the required output schema: ${check.errors}. Call done again with \`data\` corrected to match the schema exactly.`,
        };
      }
      return {
        kind: "final",
        success: false,
        output: null,
        text: `The answer did not match the output schema: ${check.errors}`,
        summary: `Task ended without success: the answer did not match the output schema after ${ctx.schemaFailures + 1} attempts`,
      };
    }
    const output = redactDeep(done.data, deps.redact);
    return { kind: "final", success: done.success, output, text: JSON.stringify(output), summary };
  }

  if (mode.codeMode) {
    const code = done.code?.trim() ? done.code : replayScript(ctx.task.task, ctx.trace);
    let output: unknown;
    if (deps.runScript) {
      const env: Record<string, string> = {};
      if (ctx.task.secretKeys.length > 0 && code.includes("SECRET_")) {
        for (const [key, value] of Object.entries(await ctx.secrets())) env[secretEnvName(key)] = value;
      }
      const run = await deps.runScript(code, env);
      output = run.ok ? run.output : { error: run.error ?? "the script failed" };
    }
    const result = redactDeep({ text, code, ...(output !== undefined ? { output } : {}) }, deps.redact);
    return { kind: "final", success: done.success, output: result, text, summary };
  }

  return { kind: "final", success: done.success, output: deps.redact(text), text, summary };
}
