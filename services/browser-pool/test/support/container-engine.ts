import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildImages, findEngine, imageOf } from "@bas/containers";
import { eventually, runEnv } from "@bas/testing";

export interface ContainerEngine {
  /** The Docker Engine API's socket, as the container driver takes it (CONTAINER_ENGINE_SOCKET). */
  socket: string;
  /** `bas/chromium`, built here first if the engine did not have it. */
  browserImage: string;
  /** Runs the engine's command line (inspect, exec), resolving with its output. */
  exec(args: string[]): Promise<string>;
  close(): Promise<void>;
}

/**
 * Podman's (or Docker's) Engine API for the container driver's tests, served by a `podman system service` of the
 * test's own on a socket in a temp folder, and the browser image in its store: `npm run images chromium` runs first
 * when it is missing (minutes on a fresh machine, then cached by the engine).
 */
/**
 * Runs `work` in one test file at a time across the run's workers (a folder in the run's temp folder is the lock):
 * two files that both find the image missing build it once.
 */
async function oneAtATime(name: string, work: () => Promise<void>): Promise<void> {
  const lock = join(tmpdir(), `bas-${name}.lock`);
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
    await work();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

export async function startContainerEngine(log: (line: string) => void): Promise<ContainerEngine> {
  const engine = findEngine();
  const browserImage = imageOf("chromium");
  await oneAtATime("chromium-image", async () => {
    if (!(await engine.hasImage(browserImage))) await buildImages(engine, process.env, log, ["chromium"]);
  });
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
