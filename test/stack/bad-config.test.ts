import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, waitForExit } from "@bas/embedded-infra";

const ROOT = resolve(__dirname, "../..");
const SERVICES = ["gateway", "sessions", "browser-pool", "runner", "billing"];

function run(service: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", `services/${service}/src/main.ts`], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      done({ code, stderr });
    });
  });
}

describe.each(SERVICES)("%s given a bad environment value", (service) => {
  test("exits non-zero with a message naming the variable", async () => {
    const { code, stderr } = await run(service, { GRPC_PORT: "not-a-port" });
    expect(code).not.toBe(0);
    expect(stderr).toContain("GRPC_PORT");
  });

  test("names a malformed NATS_URL too", async () => {
    const { code, stderr } = await run(service, { NATS_URL: "http://wrong-scheme" });
    expect(code).not.toBe(0);
    expect(stderr).toContain("NATS_URL");
  });
});

test("the launcher checks every service's variables before it starts anything, and names each bad one", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "bas-stack-badconfig-"));
  try {
    const child = spawn(process.execPath, ["--import", "tsx", "packages/local-stack/src/main.ts"], {
      cwd: ROOT,
      // LOG_LEVEL is the stack's own; MAX_STEPS and RUNNER_CONCURRENCY only the runner reads.
      env: { ...process.env, DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "loud", MAX_STEPS: "0", RUNNER_CONCURRENCY: "x" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c) => {
      output += c;
    });
    child.stderr.on("data", (c) => {
      output += c;
    });
    await waitForExit(child, 30_000);
    expect(child.exitCode).toBe(1);
    expect(output).toContain("LOG_LEVEL");
    expect(output).toContain("PORT: must be a port number from 1 to 65535");
    // LOG_LEVEL stops it before the services' variables are read; fixed, the runner's two are named together.
    const fixed = spawn(process.execPath, ["--import", "tsx", "packages/local-stack/src/main.ts"], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        LOG_LEVEL: "info",
        MAX_STEPS: "0",
        RUNNER_CONCURRENCY: "x",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let second = "";
    fixed.stderr.on("data", (c) => {
      second += c;
    });
    await waitForExit(fixed, 30_000);
    expect(fixed.exitCode).toBe(1);
    expect(second).toContain("runner: MAX_STEPS: Too small");
    expect(second).toContain("runner: RUNNER_CONCURRENCY:");
    expect(existsSync(join(dataDir, "nats"))).toBe(false);
    expect(existsSync(join(dataDir, "postgres"))).toBe(false);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a service refusing its configuration exits 78 (EX_CONFIG), which the launcher's supervisor never restarts", async () => {
  const { code, stderr } = await run("runner", { MAX_STEPS: "0" });
  expect(code).toBe(78);
  expect(stderr).toContain("MAX_STEPS");
});

test("browser-pool on the Kubernetes driver without K8S_BROWSER_IMAGE says which image to give (no third-party default)", async () => {
  const { code, stderr } = await run("browser-pool", { BROWSER_DRIVER: "kubernetes", K8S_BROWSER_IMAGE: "" });
  expect(code).toBe(78);
  expect(stderr).toContain("K8S_BROWSER_IMAGE: required with BROWSER_DRIVER=kubernetes");
  expect(stderr).toContain("chromium target");
});

test("a CHROMIUM_PATH that names another program is refused before anything starts", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "bas-stack-notchromium-"));
  try {
    const child = spawn(process.execPath, ["--import", "tsx", "packages/local-stack/src/main.ts"], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, PORT: String(await freePort()), CHROMIUM_PATH: "/bin/echo" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    await waitForExit(child, 30_000);
    expect(child.exitCode).toBe(1);
    expect(stderr).toMatch(/\/bin\/echo is not Chromium \(its --version printed "echo \(GNU coreutils\)/);
    expect(existsSync(join(dataDir, "nats"))).toBe(false);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
