import { readFile } from "node:fs/promises";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Jiffies the machine's CPUs spent idle and in all, from /proc/stat. */
async function cpuTimes(): Promise<{ idle: number; total: number }> {
  const line = (await readFile("/proc/stat", "utf8")).split("\n")[0];
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  // idle + iowait
  return { idle: fields[3] + (fields[4] ?? 0), total: fields.reduce((s, n) => s + n, 0) };
}

/**
 * Waits until the machine's CPUs were at least `idleShare` idle over a window of `windowMs` (a browser that has just
 * started, or the tear-down of the last one, is done), or `maxMs` passed: a sample then measures the request, not
 * what the run before it left going. Returns whether it got quiet.
 */
export async function quietMachine({ idleShare = 0.7, windowMs = 250, maxMs = 5_000 } = {}): Promise<boolean> {
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline) {
    const before = await cpuTimes();
    await sleep(windowMs);
    const after = await cpuTimes();
    const total = after.total - before.total;
    if (total > 0 && (after.idle - before.idle) / total >= idleShare) return true;
  }
  return false;
}
