import Ajv, { type AnySchemaObject } from "ajv";
import Ajv2019 from "ajv/dist/2019";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";

// Callers send schemas from many generators (pydantic, zod, hand-written), with unknown keywords and formats:
// compile leniently, but the schema itself must be valid for the draft it names.
const options = { strict: false, allErrors: false, validateFormats: true, logger: false } as const;
const drafts = {
  "2020": addFormats(new Ajv2020(options)),
  "2019": addFormats(new Ajv2019(options)),
  "07": addFormats(new Ajv(options)),
};

function draftOf(schema: AnySchemaObject): keyof typeof drafts {
  const uri = typeof schema.$schema === "string" ? schema.$schema : "";
  if (uri.includes("2020-12")) return "2020";
  if (uri.includes("2019-09")) return "2019";
  return "07";
}

/** Null when `schema` compiles as a JSON Schema; otherwise why it does not. */
export function jsonSchemaProblem(schema: Record<string, unknown>): string | null {
  const ajv = drafts[draftOf(schema)];
  const copy = structuredClone(schema) as AnySchemaObject;
  // An unknown $schema URI would make ajv look for a meta-schema it does not have; the draft is chosen above.
  delete copy.$schema;
  // The $id would register the schema globally and collide with the next request using the same id.
  delete copy.$id;
  try {
    ajv.compile(copy);
    return null;
  } catch (err) {
    return (err as Error).message.slice(0, 300);
  } finally {
    ajv.removeSchema(copy);
  }
}
