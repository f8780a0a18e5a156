import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/** What an OpenAPI schema validator (@seriousme/openapi-schema-validator, run as its CLI) says of `doc`. */
export async function validateOpenApi(doc: object): Promise<unknown> {
  const file = join(mkdtempSync(join(tmpdir(), "openapi-")), "openapi.json");
  writeFileSync(file, JSON.stringify(doc));
  const validator = join(
    __dirname,
    "../../../node_modules/@seriousme/openapi-schema-validator/bin/validate-api-cli.js",
  );
  const { stdout } = await promisify(execFile)(process.execPath, [validator, file]).catch((err) => err);
  return JSON.parse(stdout);
}
