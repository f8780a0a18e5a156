import { readFile } from "node:fs/promises";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds a process has used so far (user + system), from /proc; 0 when it is gone. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields.length > 13 ? (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND : 0;
}
