import { parseArgs } from "node:util";
import { createDb, migrate } from "@bas/event-store";
import { commonEnv, loadConfig, ServiceError } from "@bas/service-kit";
import { migrations } from "../adapters/pg/migrations";
import { createPgProjectStore } from "../adapters/pg/pg-project-store";
import type { GatewayDatabase } from "../adapters/pg/schema";
import { createProjectAdmin } from "../app/project-admin";
import { runCommand, USAGE, UsageError } from "./commands";

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: { json: { type: "boolean" }, label: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help || positionals.length === 0) {
    process.stdout.write(`${USAGE}\n`);
    return positionals.length === 0 && !values.help ? 2 : 0;
  }
  const { DATABASE_URL } = loadConfig({ DATABASE_URL: commonEnv.DATABASE_URL });
  const db = createDb<GatewayDatabase>(DATABASE_URL, { max: 2 });
  try {
    await migrate(db, "gateway", migrations);
    const output = await runCommand(createProjectAdmin({ store: createPgProjectStore(db) }), positionals, values.label);
    process.stdout.write(values.json ? `${JSON.stringify(output.json, null, 2)}\n` : `${output.text.join("\n")}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n\n${USAGE}\n`);
      return 2;
    }
    if (err instanceof ServiceError) {
      process.stderr.write(`error: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await db.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`error: ${(err as Error)?.message ?? err}\n`);
    process.exit(1);
  },
);
