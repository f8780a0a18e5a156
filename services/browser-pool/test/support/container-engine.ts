import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildImages, type Engine, findEngine, imageOf, type Target } from "@bas/containers";
import { eventually, runEnv } from "@bas/testing";

export interface ContainerEngine {
  /** The Docker Engine API's socket, as the container driver takes it (CONTAINER_ENGINE_SOCKET). */
  socket: string;
  /** `bas/chromium`, as built from this checkout. */
  browserImage: string;
  /** Runs the engine's command line (inspect, exec), resolving with its output. */
  exec(args: string[]): Promise<string>;
  close(): Promise<void>;
}

/**
 * Builds `targets` from this checkout, one test file at a time across the run's workers (a folder in the run's temp
 * folder is the lock). Always built, never taken as found: an image of older source would test old code, and the
 * engine's layer cache makes a build of unchanged source take seconds (minutes on a fresh machine).
 */
export async function buildImagesOnce(engine: Engine, targets: readonly Target[], log: (line: string) => void) {
  const lock = join(tmpdir(), "bas-images.lock");
  await eventually(
    () =>
      mkdir(lock).then(
        () => true,
        () => false,
      ),
    (taken) => taken,
    900_000,
  );
  try {
    await buildImages(engine, process.env, log, targets);
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/**
 * Podman's (or Docker's) Engine API for the container driver's tests, served by a `podman system service` of the
 * test's own on a socket in a temp folder, and the browser image in its store, built from this checkout first.
 */
export async function startContainerEngine(log: (line: string) => void): Promise<ContainerEngine> {
  const engine = findEngine();
  const browserImage = imageOf("chromium");
  await buildImagesOnce(engine, ["chromium"], log);
  if (engine.name === "docker") {
    return { socket: "/var/run/docker.sock", browserImage, exec: engine.exec, close: async () => undefined };
  }
  const dir = mkdtempSync(join(tmpdir(), "bas-podman-api-"));
  const socket = join(dir, "podman.sock");
  const service: ChildProcess = spawn("podman", ["system", "service", "--time=0", `unix://${socket}`], {
    env: { ...runEnv(), ...engine.env },
    stdio: "ignore",
  });
  const exited = new Promise<void>((resolve) => service.once("exit", () => resolve()));
  await eventually(
    async () => existsSync(socket),
    (up) => up,
    30_000,
  );
  return {
    socket,
    browserImage,
    exec: engine.exec,
    async close() {
      service.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
