import { rmSync } from "node:fs";
import { endProcessesOfRun } from "./run-processes";

/** Stops the shared servers, ends whatever else the run left running, and deletes the run's temp folder. */
export default async function globalTeardown(): Promise<void> {
  const stops = (globalThis as { __basInfraStops?: Array<() => Promise<void>> }).__basInfraStops ?? [];
  await Promise.all(stops.map((stop) => stop()));
  const root = process.env.BAS_TEST_ROOT;
  if (!root) return;
  const janitor = (globalThis as { __basJanitor?: number }).__basJanitor;
  const left = await endProcessesOfRun(root);
  if (janitor) process.kill(janitor, "SIGTERM"); // it would find nothing left to do
  // A test that leaves a process behind has a bug: say which, so it can be fixed rather than swept up silently.
  if (left.length > 0)
    process.stderr.write(`globalTeardown: ended what the tests left running:\n  ${left.join("\n  ")}\n`);
  rmSync(root, { recursive: true, force: true });
}
