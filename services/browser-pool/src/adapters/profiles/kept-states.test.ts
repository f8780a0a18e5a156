import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKeptStates } from "./kept-states";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "kept-states-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A closed browser's profile folder: state, caches, per-run files and a link out. */
function browserFolder(name: string): string {
  const folder = join(root, name);
  mkdirSync(join(folder, "Default/Local Storage"), { recursive: true });
  mkdirSync(join(folder, "Default/Code Cache/js"), { recursive: true });
  writeFileSync(join(folder, "Default/Local Storage/000003.log"), "note");
  writeFileSync(join(folder, "Default/Code Cache/js/index"), "cache");
  writeFileSync(join(folder, "DevToolsActivePort"), "9222");
  symlinkSync("/etc", join(folder, "Default/outside"));
  symlinkSync("host-1", join(folder, "SingletonLock"));
  return folder;
}

const listing = (dir: string) => readdirSync(dir, { recursive: true }).map(String).sort();

test("a kept folder holds the state without caches, per-run files or links, and is taken once", async () => {
  const kept = createKeptStates(join(root, "kept"));
  await kept.keep("profile-a-1.tgz", browserFolder("b1"));
  const into = join(root, "b2");
  mkdirSync(into);
  expect(await kept.take("profile-a-1.tgz", into, undefined)).toBe(true);
  expect(listing(into)).toEqual(["Default", "Default/Local Storage", "Default/Local Storage/000003.log"]);
  expect(await kept.take("profile-a-1.tgz", join(root, "b3"), undefined)).toBe(false);
});

test("at most maxKept folders stay, the most recently kept; a ref that is not a plain name is never a path", async () => {
  const kept = createKeptStates(join(root, "kept"), 2);
  for (const n of [1, 2, 3]) {
    await kept.keep(`profile-a-${n}.tgz`, browserFolder(`b${n}`));
    // mtime resolution: each later keep is strictly newer
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(readdirSync(join(root, "kept")).sort()).toEqual(["profile-a-2.tgz", "profile-a-3.tgz"]);

  await kept.keep("../escape", browserFolder("b4"));
  expect(readdirSync(root)).not.toContain("escape");
  expect(await kept.take("../kept/profile-a-3.tgz", join(root, "b5"), undefined)).toBe(false);
});
