import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { NO_MODEL_MANIFEST } from "../chromium-features";

/**
 * Chromium's managed policies for every sandboxed browser. `file://` is blocked outright: even inside the sandbox a
 * tenant has no business reading the system's files (a blocked page shows ERR_BLOCKED_BY_ADMINISTRATOR). One file
 * (services/browser-pool/chromium/), which the Dockerfile copies into the browser image as it is.
 */
import policies from "../../../chromium/policies.json";

export const BROWSER_POLICIES = policies;

/** The files of /etc/chromium every sandbox binds: the policy folder and the empty model manifest. */
export interface ChromiumConfig {
  /** Bound over /etc/chromium/policies/managed. */
  policyDir: string;
  /** Bound at MODEL_MANIFEST_PATH. */
  modelManifest: string;
}

export async function writeChromiumConfig(root: string): Promise<ChromiumConfig> {
  const policyDir = join(root, ".policies");
  const modelManifest = join(root, ".model-manifest.json");
  await mkdir(policyDir, { recursive: true, mode: 0o755 });
  await writeFile(join(policyDir, "bas.json"), JSON.stringify(BROWSER_POLICIES), { mode: 0o644 });
  await writeFile(modelManifest, JSON.stringify(NO_MODEL_MANIFEST), { mode: 0o644 });
  return { policyDir, modelManifest };
}
