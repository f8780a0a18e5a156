import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, waitForExit, waitForLine } from "@bas/embedded-infra";

const ROOT = resolve(__dirname, "../..");

/** Processes whose command line mentions `needle` (our temp data dir or our entry files). */
function processesMentioning(needle: string): string[] {
  const out = execFileSync("ps", ["-eo", "pid,args"]).toString().split("\n");
  return out.filter((line) => line.includes(needle) && !line.includes("ps -eo"));
}

function withoutInfraUrls(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NATS_URL: _nats, DATABASE_URL: _db, ...rest } = env;
  return rest;
}

function startStack(dataDir: string, port: number): ChildProcess {
  // The README's command, minus npm: the same entry file.
  return spawn(process.execPath, ["--import", "tsx", "packages/local-stack/src/main.ts"], {
    cwd: ROOT,
    // No NATS_URL / DATABASE_URL: the stack must start its own, as on a newcomer's machine.
    env: { ...withoutInfraUrls(process.env), DATA_DIR: dataDir, PORT: String(port), NAMESPACE: "bas" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function childPids(pid: number): number[] {
  try {
    return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)])
      .toString()
      .split("\n")
      .map((l) => Number(l.trim()))
      .filter(Boolean);
  } catch {
    return [];
  }
}

/** Still running: exists and is not a zombie waiting to be reaped. */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
};

/** SIGTERM, then: exit code 0, and none of its children (the five services) nor its servers still running. */
async function stopStack(stack: ChildProcess, dataDir: string) {
  const children = childPids(stack.pid!);
  expect(children.length).toBeGreaterThanOrEqual(5);
  stack.kill("SIGTERM");
  await waitForExit(stack, 60_000);
  expect(stack.exitCode).toBe(0);
  expect(children.filter(alive)).toEqual([]);
  expect(processesMentioning(dataDir)).toEqual([]);
}

describe("the one-command local stack", () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), "bas-stack-"));
    chmodSync(dataDir, 0o755);
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  test("starts with its own NATS and Postgres, is healthy, stops every child on SIGTERM, and starts again on the same data", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const first = startStack(dataDir, port);
    const banner = await waitForLine(first, /API key:\s+(\S+)/, 150_000, "local stack");
    const apiKey = banner.split(/\s+/).pop()!;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    // Something to find after the restart.
    const created = await fetch(`${base}/api/v3/sessions`, {
      method: "POST",
      headers: { "X-Service-API-Key": apiKey, "Content-Type": "application/json" },
      body: JSON.stringify({ keepAlive: true }),
    });
    expect(created.status).toBeLessThan(300);
    const session = (await created.json()) as { id: string };

    await stopStack(first, dataDir);

    const second = startStack(dataDir, port);
    const again = await waitForLine(second, /API key:\s+(\S+)/, 150_000, "local stack");
    expect(again.split(/\s+/).pop()).toBe(apiKey);
    const read = await fetch(`${base}/api/v3/sessions/${session.id}`, { headers: { "X-Service-API-Key": apiKey } });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { id: string }).id).toBe(session.id);
    await stopStack(second, dataDir);
  }, 400_000);
});
