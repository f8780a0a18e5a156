import { readdir, readFile } from "node:fs/promises";
import type { BrowserMemory } from "../../domain/browser-driver";

/** Linux /proc readings the local driver needs: who belongs to a process group, what a process was started with. */

const pids = async (): Promise<number[]> => (await readdir("/proc")).filter((name) => /^\d+$/.test(name)).map(Number);

/** The parent and process group of a live process; undefined when it is gone or a zombie. */
async function statOf(pid: number): Promise<{ ppid: number; pgrp: number } | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may itself hold spaces and parentheses): state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" ? undefined : { ppid: Number(fields[1]), pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

/** The process group of `pid`, or undefined when it is gone. */
export async function processGroupOf(pid: number): Promise<number | undefined> {
  return (await statOf(pid))?.pgrp;
}

export async function commandLineOf(pid: number): Promise<string[] | undefined> {
  try {
    const raw = await readFile(`/proc/${pid}/cmdline`, "utf8");
    return raw.split("\0").filter(Boolean);
  } catch {
    return undefined;
  }
}

/** Every live (non-zombie) process whose process group is `pgid`. */
export async function processesInGroup(pgid: number): Promise<number[]> {
  const members: number[] = [];
  for (const pid of await pids()) {
    if ((await processGroupOf(pid)) === pgid) members.push(pid);
  }
  return members;
}

/** Processes whose command line has an argument starting with `prefix`, with that argument. */
export async function findProcessesByArgPrefix(prefix: string): Promise<Array<{ pid: number; arg: string }>> {
  const found: Array<{ pid: number; arg: string }> = [];
  for (const pid of await pids()) {
    const arg = (await commandLineOf(pid))?.find((a) => a.startsWith(prefix));
    if (arg && (await processGroupOf(pid)) !== undefined) found.push({ pid, arg });
  }
  return found;
}

/**
 * `root` and every live process descended from it. Unlike its process group this includes what left the group:
 * Chromium's crash-report handlers start their own sessions, but stay children (inside the sandbox's PID namespace,
 * of its init), so a browser's tree is everything it started.
 */
export async function processTree(root: number): Promise<number[]> {
  const children = new Map<number, number[]>();
  for (const pid of await pids()) {
    const parent = (await statOf(pid))?.ppid;
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  if ((await statOf(root)) === undefined) return [];
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]) ?? []));
  return tree;
}

/** RSS and PSS summed over a browser's processes (`root` and all it started), from smaps_rollup. */
export async function treeMemory(root: number): Promise<BrowserMemory | undefined> {
  return memoryOf(await processTree(root));
}

async function memoryOf(members: number[]): Promise<BrowserMemory | undefined> {
  if (members.length === 0) return undefined;
  let rssKb = 0;
  let pssKb = 0;
  for (const pid of members) {
    try {
      const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8");
      rssKb += Number(rollup.match(/^Rss:\s+(\d+)/m)?.[1] ?? 0);
      pssKb += Number(rollup.match(/^Pss:\s+(\d+)/m)?.[1] ?? 0);
    } catch {
      // Exited between the scan and the read.
    }
  }
  return { rssBytes: rssKb * 1024, pssBytes: pssKb * 1024, processes: members.length };
}

/** Sends `signal` to a whole process group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}
