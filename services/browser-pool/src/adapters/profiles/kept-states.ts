import { execFile } from "node:child_process";
import { mkdir, readdir, rename, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { heldInState } from "./state-contents";

/** How many unpacked states a node keeps at most; the least recently kept go first. */
const MAX_KEPT = 32;
/** A state's ref as a folder name: refs are ours (`profile-<id>-<uuid>.tgz`), checked all the same. */
const SAFE_REF = /^[\w.-]+$/;
const run = promisify(execFile);

/**
 * The folders of the states this node saved, unpacked, one per state: the next browser with the profile on this
 * node (the usual case: a profile is reused where it was last used) moves its folder into place instead of
 * unpacking the archive, about 150 ms less on a profile's acquisition. A folder is taken once, and holds exactly
 * what the archive holds; a node without it (another node saved the state, or it was evicted) unpacks the blob.
 * `dir` is readable by browser-pool's user alone and is never bound into a sandbox.
 */
export function createKeptStates(dir: string, maxKept = MAX_KEPT) {
  /** The least recently kept folders beyond `maxKept` go. */
  async function evict() {
    const names = await readdir(dir);
    if (names.length <= maxKept) return;
    const aged = await Promise.all(
      names.map(async (name) => ({ name, at: (await stat(join(dir, name)).catch(() => undefined))?.mtimeMs ?? 0 })),
    );
    aged.sort((a, b) => b.at - a.at);
    await Promise.all(aged.slice(maxKept).map(({ name }) => rm(join(dir, name), { recursive: true, force: true })));
  }

  return {
    /**
     * Keeps a closed browser's profile folder (moved, not copied) as the unpacked state `ref`, without what the
     * state leaves out. Best effort: on any failure nothing is kept, and the next browser unpacks the archive.
     */
    async keep(ref: string, folder: string): Promise<void> {
      if (!SAFE_REF.test(ref)) return;
      const target = join(dir, ref);
      try {
        await leaveOutOfState(folder);
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await rename(folder, target);
        const now = new Date();
        await utimes(target, now, now);
        await evict();
      } catch {
        await rm(target, { recursive: true, force: true }).catch(() => undefined);
      }
    },

    /**
     * Moves the unpacked state `ref` into `into` (an empty folder) and gives it to the browser's user; false when
     * this node does not have it.
     */
    async take(ref: string, into: string, uid: number | undefined): Promise<boolean> {
      if (!SAFE_REF.test(ref)) return false;
      try {
        await rename(join(dir, ref), into);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
        throw err;
      }
      // The folder holds no links (left out when kept); never following one is said all the same.
      if (uid !== undefined) await run("chown", ["-R", "-P", "--no-dereference", `${uid}:${uid}`, into]);
      return true;
    },

    /** The refs of the states kept here. */
    refs: (): Promise<string[]> => readdir(dir).catch(() => []),

    /** Removes every kept folder whose ref starts with `prefix`. */
    async drop(prefix: string): Promise<void> {
      const names = await readdir(dir).catch(() => [] as string[]);
      const dropped = names.filter((name) => name.startsWith(prefix));
      await Promise.all(dropped.map((name) => rm(join(dir, name), { recursive: true, force: true })));
    },
  };
}

export type KeptStates = ReturnType<typeof createKeptStates>;

/** Removes from a profile folder every entry a saved state leaves out, as the archive does. */
async function leaveOutOfState(folder: string, relative = ""): Promise<void> {
  for (const entry of await readdir(join(folder, relative), { withFileTypes: true })) {
    const path = relative ? `${relative}/${entry.name}` : entry.name;
    if (!heldInState(path, entry)) await rm(join(folder, path), { recursive: true, force: true });
    else if (entry.isDirectory()) await leaveOutOfState(folder, path);
  }
}
