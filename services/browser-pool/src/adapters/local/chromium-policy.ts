import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Chromium's managed policies for every sandboxed browser. `file://` is blocked outright: even inside the sandbox a
 * tenant has no business reading the system's files (a blocked page shows ERR_BLOCKED_BY_ADMINISTRATOR).
 */
export const BROWSER_POLICIES = {
  URLBlocklist: ["file://*"],
} as const;

/** Writes the policy folder the sandbox binds over /etc/chromium/policies/managed; returns its path. */
export async function writeChromiumPolicies(root: string): Promise<string> {
  const dir = join(root, ".policies");
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await writeFile(join(dir, "bas.json"), JSON.stringify(BROWSER_POLICIES), { mode: 0o644 });
  return dir;
}
