import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";

/** A container engine's command line, as the image build and the containerized stack drive it. */
export interface Engine {
  name: "podman" | "docker";
  /** The environment its commands run with (for Podman: the containers.conf below). */
  env: NodeJS.ProcessEnv;
  /** Arguments every `run` and `create` takes on this machine. */
  runArgs: string[];
  /** Runs `engine ...args`, resolves with its standard output; rejects with what it printed on failure. */
  exec(args: string[], options?: { input?: string }): Promise<string>;
  /** Whether an image of that reference is in the engine's store. */
  hasImage(reference: string): Promise<boolean>;
}

export class NoEngineError extends Error {
  override name = "NoEngineError";
}

const onPath = (name: string, env: NodeJS.ProcessEnv) =>
  (env.PATH ?? "").split(delimiter).some((dir) => dir && existsSync(join(dir, name)));

/**
 * Podman's settings for machines like these: containers inherit the host's rlimits (setting them is not permitted in
 * some VMs: `default_ulimits = []` and `--ulimit host`), and runc runs them where it is installed (crun fails on
 * cgroups in hybrid mode). Written once into the user's cache; a CONTAINERS_CONF of the user's own wins.
 */
function podmanConf(env: NodeJS.ProcessEnv): string {
  const dir = join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "bas");
  const file = join(dir, "containers.conf");
  const runtime = existsSync("/usr/bin/runc") || existsSync("/usr/sbin/runc") ? '\n[engine]\nruntime = "runc"\n' : "";
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    file,
    `# Written by the browser agent service's container tools.\n[containers]\ndefault_ulimits = []\n${runtime}`,
  );
  return file;
}

/**
 * The engine to build and run images with: CONTAINER_ENGINE (podman or docker) if set, else Podman where it is
 * installed, else Docker.
 */
export function findEngine(env: NodeJS.ProcessEnv = process.env): Engine {
  const wanted = env.CONTAINER_ENGINE;
  if (wanted && wanted !== "podman" && wanted !== "docker") {
    throw new NoEngineError(`CONTAINER_ENGINE=${wanted}: it must be podman or docker.`);
  }
  const name = (wanted ?? (onPath("podman", env) ? "podman" : onPath("docker", env) ? "docker" : undefined)) as
    | Engine["name"]
    | undefined;
  if (!name || !onPath(name, env)) {
    throw new NoEngineError(
      `${name ?? "no container engine"} not found: install Podman (npm run setup does, on Debian: apt-get install -y ` +
        "podman runc debootstrap) or Docker, or say which one with CONTAINER_ENGINE.",
    );
  }
  // Podman fails deep inside a build on a CONTAINERS_CONF it cannot read: say so here, before anything runs.
  if (name === "podman" && env.CONTAINERS_CONF && !existsSync(env.CONTAINERS_CONF)) {
    throw new NoEngineError(
      `CONTAINERS_CONF=${env.CONTAINERS_CONF}: no such file. Unset it (a suitable one is written for you) or point it ` +
        "at a containers.conf that exists.",
    );
  }
  const engineEnv = { ...env };
  if (name === "podman" && !env.CONTAINERS_CONF) engineEnv.CONTAINERS_CONF = podmanConf(env);
  const runArgs = name === "podman" ? ["--ulimit", "host"] : [];
  const exec = (args: string[], options: { input?: string } = {}) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(name, args, { env: engineEnv, stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (chunk) => {
        out += chunk;
      });
      child.stderr.on("data", (chunk) => {
        err += chunk;
      });
      child.on("error", reject);
      child.on("close", (code) =>
        code === 0 ? resolve(out) : reject(new Error(`${name} ${args.join(" ")}: exit ${code}\n${err.trim()}`)),
      );
      child.stdin.end(options.input ?? "");
    });
  return {
    name,
    env: engineEnv,
    runArgs,
    exec,
    hasImage: (reference) =>
      exec(["image", "inspect", reference]).then(
        () => true,
        () => false,
      ),
  };
}
