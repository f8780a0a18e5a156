import { rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { endProcessesOfRun } from "./run-processes";

/**
 * Started by globalSetup, detached: when the jest process is gone without its globalTeardown having run (killed,
 * crashed), this ends every process the run left and deletes the run's temp folder. globalTeardown stops it when
 * the run ends normally.
 */
async function main(jestPid: number, root: string) {
  const alive = () => {
    try {
      process.kill(jestPid, 0);
      return true;
    } catch {
      return false;
    }
  };
  while (alive()) await sleep(500);
  await endProcessesOfRun(root);
  rmSync(root, { recursive: true, force: true });
}

const [jestPid, root] = process.argv.slice(2);
void main(Number(jestPid), root!).then(() => process.exit(0));
