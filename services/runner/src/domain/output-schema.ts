import Ajv, { type ErrorObject, type ValidateFunction } from "ajv";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";

export type OutputCheck = { ok: true } | { ok: false; errors: string };

function describe(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 10)
    .map(
      (e) =>
        `${e.instancePath || "(root)"} ${e.message ?? "is invalid"}${e.params && "additionalProperty" in e.params ? ` (${e.params.additionalProperty})` : ""}`,
    )
    .join("; ");
}

/** Validates answers against the task's output schema (draft-07, or 2020-12 when the schema says so). */
export function createOutputValidator(schema: Record<string, unknown>): (value: unknown) => OutputCheck {
  const draft2020 = typeof schema.$schema === "string" && schema.$schema.includes("2020-12");
  const ajv = draft2020 ? new Ajv2020({ strict: false, allErrors: true }) : new Ajv({ strict: false, allErrors: true });
  addFormats(ajv as unknown as Ajv);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } catch {
    // The gateway refuses schemas that do not compile; if one gets here anyway, no answer could ever pass, so
    // checking would only burn the retries: accept the answer as given.
    return () => ({ ok: true });
  }
  return (value) => (validate(value) ? { ok: true } : { ok: false, errors: describe(validate.errors) });
}
