import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Every process a test run started, however it was started: by the harness, by a test, by a launcher a test
 * started, or by a browser-pool (whose sandboxed browsers outlive it on purpose). Each carries the run's marker in
 * its environment (inherited from jest, which got it in globalSetup) or the run's temp folder on its command line
 * (the browsers, whose environment is scrubbed), or descends from one that does. `markerVariable` names another
 * variable that marks them with `root` (a test's own stack).
 */
export function processesOfRun(root: string, spare: number[] = [], markerVariable = "BAS_TEST_ROOT"): number[] {
  const marker = `${markerVariable}=${root}\0`;
  const parentOf = new Map<number, number>();
  const marked = new Set<number>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      parentOf.set(pid, Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmdline.includes(`${root}/`) || readFileSync(`/proc/${pid}/environ`, "utf8").includes(marker)) {
        marked.add(pid);
      }
    } catch {
      // gone meanwhile, or a kernel thread
    }
  }
  const spared = new Set(spare);
  const ofRun = (pid: number): boolean => {
    for (let p: number | undefined = pid; p && p > 1; p = parentOf.get(p)) if (marked.has(p)) return true;
    return false;
  };
  return [...parentOf.keys()].filter((pid) => !spared.has(pid) && ofRun(pid));
}

/** This process and its ancestors: the sweep must not end the jest run (or shell) it is part of. */
export function selfAndAncestors(): number[] {
  const chain: number[] = [];
  for (let pid = process.pid; pid > 1; ) {
    chain.push(pid);
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    pid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  }
  return chain;
}

/** SIGTERM to every process of the run, SIGKILL to what is still there after `graceMs`; returns their commands. */
export async function endProcessesOfRun(root: string, graceMs = 3_000): Promise<string[]> {
  const spare = selfAndAncestors();
  const found = processesOfRun(root, spare);
  const commands = new Map(found.map((pid) => [pid, commandOf(pid)]));
  const signal = (pids: number[], sig: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        // already gone
      }
    }
  };
  signal(found, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && processesOfRun(root, spare).length > 0) await sleep(100);
  signal(processesOfRun(root, spare), "SIGKILL");
  return found.map((pid) => commands.get(pid) ?? String(pid));
}

/** A process's command line, its first 160 characters; undefined once it is gone. */
export function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim().slice(0, 160);
  } catch {
    return undefined;
  }
}
