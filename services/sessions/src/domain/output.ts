import type { JsonValue, TaskOptions } from "./events";

/**
 * Why an agent's output does not have the shape its task's mode asks for, or null when it does. Modes: `codeMode`
 * → `{text, code, output?}`; an `outputSchema` → any JSON (conformance to the schema itself is checked by the
 * caller of the decider, which has a schema validator); otherwise free text. A null output is always allowed
 * (a task that gave up has none).
 */
export function outputShapeProblem(options: TaskOptions, output: JsonValue): string | null {
  if (output === null) return null;
  if (options.codeMode) {
    if (typeof output !== "object" || Array.isArray(output)) return "codeMode output must be an object";
    if (typeof output.text !== "string") return "codeMode output needs a string `text`";
    if (typeof output.code !== "string") return "codeMode output needs a string `code`";
    const extra = Object.keys(output).filter((k) => !["text", "code", "output"].includes(k));
    return extra.length ? `codeMode output has unexpected fields: ${extra.join(", ")}` : null;
  }
  if (options.outputSchema !== null) return null;
  return typeof output === "string" ? null : "output must be a string when no outputSchema was given";
}
