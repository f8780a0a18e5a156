import { chownSync, mkdirSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { type Engine, imageOf, type Target, TARGETS } from "@bas/containers";

/**
 * `npm run start:containers`: NATS, Postgres and each service as a container of its image, on the host's network
 * (so the services find one another, and a model or site on the host's loopback, at the addresses `npm start` uses),
 * each run by the supervisor as `<engine> run` in the foreground: its exit is the container's, its stdin the lifeline.
 */
export interface ContainerRuntime {
  /** What the supervisor runs for `target`; `env` is handed over by name (`-e NAME`), never on the command line. */
  command(target: Target, env: NodeJS.ProcessEnv): { program: string; args: string[]; env: NodeJS.ProcessEnv };
  /** Images that are not built yet. */
  missingImages(): Promise<string[]>;
  /** Removes every container of this stack at once (the stop deadline, a launcher that is stopping). */
  removeAll(): Promise<void>;
}

/** The host's own variables, which mean nothing in a container (its image sets PATH, HOME, the XDG folders). */
const HOST_ONLY =
  /^(PATH|HOME|PWD|OLDPWD|SHELL|SHLVL|USER|LOGNAME|HOSTNAME|TERM|TMPDIR|TEMP|TMP|CHROMIUM_PATH|_|INIT_CWD|EDITOR|COLORTERM|NODE_OPTIONS|NODE_PATH|MAIL|LS_COLORS|SSH_.*|XDG_.*|npm_.*|NPM_.*|CONTAINERS_CONF)$/;

/** Where browser-pool keeps its browsers' profiles in its container: a host folder of DATA_DIR, the image's user's. */
const BROWSERS_IN_CONTAINER = "/data/browsers";
const IMAGE_UID = 1000;

/**
 * The name of DATA_DIR's stack, which its containers (`<name>-<target>`, labelled `io.bas.stack=<name>`) and its
 * volumes (`<name>-nats`, `<name>-postgres`) carry: one stack per DATA_DIR (its lock says so).
 */
export const stackNameOf = (dataDir: string) => `bas-${createHash("sha256").update(dataDir).digest("hex").slice(0, 8)}`;

export function containerRuntime(engine: Engine, dataDir: string): ContainerRuntime {
  const stack = stackNameOf(dataDir);
  const label = `io.bas.stack=${stack}`;
  const browsersDir = join(dataDir, "containers", "browsers");

  /** What each container needs beyond the image: its data, and the browser sandboxes' namespaces for browser-pool. */
  function extraArgs(target: Target): string[] {
    switch (target) {
      case "nats":
        return ["--volume", `${stack}-nats:/data`];
      case "postgres":
        return ["--volume", `${stack}-postgres:/data`];
      case "browser-pool":
        mkdirSync(browsersDir, { recursive: true, mode: 0o700 });
        chownSync(browsersDir, IMAGE_UID, IMAGE_UID);
        return [
          "--volume",
          `${browsersDir}:${BROWSERS_IN_CONTAINER}`,
          "--env",
          `BROWSER_DATA_DIR=${BROWSERS_IN_CONTAINER}`,
          // Each browser is a bubblewrap sandbox with namespaces of its own (the isolation `npm start` gives it on a
          // host): it mounts its own /proc, which the engine's masks over /proc forbid, and names its own host, which
          // the engine's seccomp filter refuses without CAP_SYS_ADMIN. The container keeps no capability.
          "--security-opt",
          engine.name === "podman" ? "unmask=ALL" : "systempaths=unconfined",
          "--security-opt",
          "seccomp=unconfined",
        ];
      default:
        return [];
    }
  }

  return {
    command(target, env) {
      const names = Object.keys(env).filter((name) => env[name] !== undefined && !HOST_ONLY.test(name));
      return {
        program: engine.name,
        // The engine's own settings (Podman's containers.conf), beside the variables it hands over.
        env: engine.name === "podman" ? { CONTAINERS_CONF: engine.env.CONTAINERS_CONF } : {},
        args: [
          "run",
          "--rm",
          "--interactive",
          `--name=${stack}-${target}`,
          `--label=${label}`,
          "--network=host",
          "--read-only",
          ...(engine.name === "docker" ? ["--tmpfs", "/tmp"] : []),
          // The supervisor is the health check here: it restarts what exits; the engine's timers need systemd.
          "--no-healthcheck",
          ...engine.runArgs,
          ...extraArgs(target),
          ...names.flatMap((name) => ["--env", name]),
          imageOf(target),
        ],
      };
    },
    async missingImages() {
      const missing: string[] = [];
      for (const target of TARGETS) if (!(await engine.hasImage(imageOf(target)))) missing.push(imageOf(target));
      return missing;
    },
    async removeAll() {
      const ids = (await engine.exec(["ps", "--all", "--quiet", "--filter", `label=${label}`]).catch(() => ""))
        .split("\n")
        .filter(Boolean);
      if (ids.length > 0) await engine.exec(["rm", "--force", ...ids]).catch(() => undefined);
    },
  };
}
