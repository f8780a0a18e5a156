import { spawn } from "node:child_process";
import { resolve } from "node:path";

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
