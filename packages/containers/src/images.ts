import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { baseImages } from "./base-images";
import type { Engine } from "./engine";

const ROOT = resolve(__dirname, "../../..");

/** The Dockerfile's targets, each an image `bas/<target>:<version>`. */
export const TARGETS = [
  "gateway",
  "sessions",
  "runner",
  "billing",
  "browser-pool",
  "chromium",
  "nats",
  "postgres",
] as const;
export type Target = (typeof TARGETS)[number];
const DEBIAN_ONLY: readonly Target[] = ["chromium", "nats", "postgres"];

/** The images' tag: the project's version, which is also the chart's appVersion. */
export const VERSION: string = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;

export const imageOf = (target: Target, version = VERSION) => `localhost/bas/${target}:${version}`;

export interface BuiltImage {
  reference: string;
  bytes: number;
}

/**
 * Builds every image from the Dockerfile, each target on the layers of the ones before (the engine's cache), and
 * returns them with their sizes.
 */
export async function buildImages(
  engine: Engine,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  targets: readonly Target[] = TARGETS,
): Promise<BuiltImage[]> {
  // The images of Debian's programs alone are built without Node's (the engine skips the stages they do not use).
  const needsNode = targets.some((t) => !DEBIAN_ONLY.includes(t));
  const base = await baseImages(engine, env, log, needsNode);
  log(`base images: ${[base.node, base.debian].filter(Boolean).join(", ")}`);
  const built: BuiltImage[] = [];
  const ca = caBundle(env);
  for (const target of targets) {
    const reference = imageOf(target);
    const started = Date.now();
    await engine.exec([
      "build",
      // Podman writes OCI images by default, which have no HEALTHCHECK.
      ...(engine.name === "podman" ? ["--format", "docker"] : []),
      "--secret",
      `id=ca-certificates,src=${ca.path}`,
      "--target",
      target,
      ...(base.node ? ["--build-arg", `NODE_IMAGE=${base.node}`] : []),
      "--build-arg",
      `DEBIAN_IMAGE=${base.debian}`,
      "-t",
      reference,
      ROOT,
    ]);
    const bytes = Number((await engine.exec(["image", "inspect", "--format", "{{.Size}}", reference])).trim());
    built.push({ reference, bytes });
    log(`${reference}: ${(bytes / 1e6).toFixed(0)} MB (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  ca.remove();
  return built;
}

/**
 * The certificates npm trusts here, for the build's `npm ci` (the Dockerfile's secret `ca-certificates`): a registry
 * reached through a proxy that inspects TLS is trusted in the build as it is on this machine. Empty where the
 * machine names none.
 */
function caBundle(env: NodeJS.ProcessEnv): { path: string; remove(): void } {
  const named = [env.NODE_EXTRA_CA_CERTS, env.SSL_CERT_FILE, "/etc/ssl/certs/ca-certificates.crt"];
  const found = named.find((path) => path && existsSync(path));
  if (found) return { path: found, remove: () => undefined };
  const dir = mkdtempSync(join(tmpdir(), "bas-ca-"));
  writeFileSync(join(dir, "none.pem"), "");
  return { path: join(dir, "none.pem"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
