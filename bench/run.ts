/**
 * `npm run bench` runs every benchmark in this folder one after another; `npm run bench -- event-store browsers`
 * runs the named ones. Each prints its own figures.
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const all = readdirSync(__dirname)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts")
  .map((f) => f.replace(/\.ts$/, ""))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}; available: ${all.join(", ")}`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length ? wanted : all) {
  console.log(`\n=== ${name} ===`);
  const r = spawnSync(process.execPath, ["--import", "tsx", join(__dirname, `${name}.ts`)], { stdio: "inherit" });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
