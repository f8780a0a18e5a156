import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** Whether `program` (a path, or a name looked up on PATH) can be run. */
export function canRun(program: string): boolean {
  const candidates = program.includes("/")
    ? [program]
    : (process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, program));
  return candidates.some((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
