import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join, resolve } from "node:path";
import { freePort, waitForExit, waitForLine } from "@bas/embedded-infra";
import { eventually } from "@bas/testing";
import { createTransport } from "nodemailer";

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

function startStack(dataDir: string, port: number, env: NodeJS.ProcessEnv = {}): ChildProcess {
  // The README's command, minus npm: the same entry file.
  return spawn(process.execPath, ["--import", "tsx", "packages/local-stack/src/main.ts"], {
    cwd: ROOT,
    // No NATS_URL / DATABASE_URL: the stack must start its own, as on a newcomer's machine.
    env: { ...withoutInfraUrls(process.env), DATA_DIR: dataDir, PORT: String(port), NAMESPACE: "bas", ...env },
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

/** A signal (SIGTERM, SIGINT, a closed terminal's SIGHUP), then: exit code 0, and none of its children (the five
 * services) nor its servers still running. */
async function stopStack(stack: ChildProcess, dataDir: string, signal: NodeJS.Signals = "SIGTERM") {
  const children = childPids(stack.pid!);
  expect(children.length).toBeGreaterThanOrEqual(5);
  stack.kill(signal);
  await waitForExit(stack, 60_000);
  expect(stack.exitCode).toBe(0);
  expect(children.filter(alive)).toEqual([]);
  expect(processesMentioning(dataDir)).toEqual([]);
}

describe("the one-command local stack", () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), "bas-stack-"));
    chmodSync(dataDir, 0o755); // as loose as a folder made by hand: the stack tightens it
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  test("starts with its own NATS and Postgres, is healthy, stops every child on SIGTERM, and starts again on the same data", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const first = startStack(dataDir, port);
    const banner = await waitForLine(first, /API key:\s+(\S+)/, 150_000, "local stack");
    const apiKey = banner.split(/\s+/).pop()!;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    // A second start on the same data leaves the first alone and says where it runs; another copy on the same port
    // says the port is taken. Neither starts anything.
    const sameData = await runToEnd(startStack(dataDir, await freePort()));
    expect(sameData.code).toBe(1);
    expect(sameData.output).toMatch(new RegExp(`already running at ${base} \\(pid ${first.pid}\\)`));
    const otherDir = mkdtempSync(join(tmpdir(), "bas-stack-other-"));
    try {
      const samePort = await runToEnd(startStack(otherDir, port));
      expect(samePort.code).toBe(1);
      expect(samePort.output).toContain(`port ${port} on 127.0.0.1 is in use: stop what uses it, or start with PORT=`);
      expect(processesMentioning(otherDir)).toEqual([]);
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
    const stillServing = await fetch(`${base}/api/v3/sessions`, { headers: { "X-Service-API-Key": apiKey } });
    expect(stillServing.status).toBe(200);
    // The temporary mailboxes' SMTP receiver is where stack.env says: it answers, and takes no mail for no one.
    const smtp = /^SMTP_ADDR=(\S+):(\d+)$/m.exec(readFileSync(join(dataDir, "stack.env"), "utf8"));
    expect(smtp).not.toBeNull();
    const transport = createTransport({ host: smtp![1], port: Number(smtp![2]), ignoreTLS: true });
    const refused = await transport
      .sendMail({ from: "someone@example.test", to: "nobody@localhost", text: "hello?" })
      .then(
        () => "accepted",
        (err: { responseCode?: number }) => err.responseCode,
      )
      .finally(() => transport.close());
    expect(refused).toBe(550);

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
    // The terminal it ran in is closed.
    await stopStack(second, dataDir, "SIGHUP");
  }, 400_000);
});

/** Runs a launcher that is expected to refuse to start: its exit code and everything it printed. */
async function runToEnd(stack: ChildProcess): Promise<{ code: number | null; output: string }> {
  let output = "";
  stack.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  stack.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  await waitForExit(stack, 30_000);
  return { code: stack.exitCode, output };
}

/** The pids the stack's own NATS and Postgres wrote down. */
function infraPids(dataDir: string) {
  return {
    nats: Number(readFileSync(join(dataDir, "nats", "nats-server.pid"), "utf8").trim()),
    postgres: Number(readFileSync(join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]),
  };
}

/** Whether `user` can read the file (or list the folder); only root can ask on another user's behalf. */
function canRead(user: string, path: string): boolean {
  try {
    execFileSync("runuser", ["-u", user, "--", "test", "-r", path]);
    return true;
  } catch {
    return false;
  }
}

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe("the local stack's NATS and Postgres, and its secrets", () => {
  let dataDir: string;
  let stack: ChildProcess | undefined;
  const apiKey = "bas_supervision_test_key_0123456789";
  beforeAll(() => {
    // A DATA_DIR as an older version left it: readable by everyone, keys and logs included.
    dataDir = mkdtempSync(join(tmpdir(), "bas-stack-sup-"));
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, "secrets.json"), JSON.stringify({ apiKey }), { mode: 0o644 });
    writeFileSync(join(dataDir, "stack.env"), "NATS_URL=nats://127.0.0.1:1\n", { mode: 0o644 });
    mkdirSync(join(dataDir, "logs"), { mode: 0o755 });
    writeFileSync(join(dataDir, "logs", "gateway.log"), "a request body\n", { mode: 0o644 });
  });
  afterAll(async () => {
    if (stack && stack.exitCode === null) {
      stack.kill("SIGTERM");
      await waitForExit(stack, 60_000);
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("restarts NATS and Postgres after kill -9, the API works again, keys and logs stay their owner's, and SIGTERM leaves nothing running", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const headers = { "X-Service-API-Key": apiKey, "Content-Type": "application/json" };
    stack = startStack(dataDir, port);
    await waitForLine(stack, /API key:/, 150_000, "local stack");

    // Secrets, where everything runs, and logs: the owner's alone, however loose they were before.
    expect(modeOf(join(dataDir, "secrets.json"))).toBe(0o600);
    expect(modeOf(join(dataDir, "stack.env"))).toBe(0o600);
    expect(modeOf(join(dataDir, "logs"))).toBe(0o700);
    expect(modeOf(join(dataDir, "logs", "gateway.log"))).toBe(0o600);
    expect(modeOf(join(dataDir, "logs", "browser-pool.log"))).toBe(0o600);
    expect(modeOf(dataDir) & 0o077).toBe(userInfo().uid === 0 ? 0o010 : 0); // root: postgres may pass through
    if (userInfo().uid === 0) {
      expect(canRead("nobody", join(dataDir, "secrets.json"))).toBe(false);
      expect(canRead("nobody", dataDir)).toBe(false);
      // The embedded Postgres reaches its own folder through DATA_DIR, and nothing else in it.
      expect(canRead("postgres", join(dataDir, "secrets.json"))).toBe(false);
      expect(canRead("postgres", join(dataDir, "stack.env"))).toBe(false);
      expect(canRead("postgres", join(dataDir, "logs", "gateway.log"))).toBe(false);
      expect(canRead("postgres", dataDir)).toBe(false);
    }

    const create = () =>
      fetch(`${base}/api/v3/sessions`, { method: "POST", headers, body: JSON.stringify({ keepAlive: true }) });
    const before = (await (await create()).json()) as { id: string };
    const killed = infraPids(dataDir);
    process.kill(killed.nats, "SIGKILL");
    process.kill(killed.postgres, "SIGKILL");

    // The stack starts both again by itself (new processes), and the services find them again.
    const restarted = await eventually(
      async () => {
        try {
          return infraPids(dataDir);
        } catch {
          return killed;
        }
      },
      (pids) =>
        pids.nats !== killed.nats && alive(pids.nats) && pids.postgres !== killed.postgres && alive(pids.postgres),
      60_000,
    );
    const after = await eventually(
      () => create().catch(() => undefined),
      (res) => res !== undefined && res.status < 300,
      60_000,
    );
    const created = (await after!.json()) as { id: string };
    for (const id of [before.id, created.id]) {
      const read = await fetch(`${base}/api/v3/sessions/${id}`, { headers });
      expect(read.status).toBe(200);
    }
    // A browser launches in the sandbox although DATA_DIR (where the stack keeps the profiles) is closed to others.
    const browser = await fetch(`${base}/api/v4/browsers`, { method: "POST", headers, body: "{}" });
    expect(browser.status).toBeLessThan(300);
    expect(((await browser.json()) as { cdpUrl: string }).cdpUrl).toMatch(/^ws:/);

    // `npm start | tee log`, then Ctrl-C: tee is gone before the launcher writes its first word about stopping.
    const children = childPids(stack.pid!);
    stack.stdout?.destroy();
    stack.stderr?.destroy();
    stack.kill("SIGINT");
    await waitForExit(stack, 60_000);
    expect([...children, restarted.nats, restarted.postgres].filter(alive)).toEqual([]);
    expect(processesMentioning(dataDir)).toEqual([]);
  }, 300_000);
});

test("Ctrl-C while NATS and Postgres are still starting stops them too", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "bas-stack-early-"));
  chmodSync(dataDir, 0o755);
  try {
    const stack = startStack(dataDir, await freePort());
    let output = "";
    stack.stdout?.on("data", (chunk) => {
      output += chunk;
    });
    // The first of the two servers is up or on its way; the services have not been started.
    await eventually(
      async () => processesMentioning(join(dataDir, "nats")).length,
      (running) => running > 0,
      60_000,
    );
    stack.kill("SIGINT");
    await waitForExit(stack, 60_000);
    expect(stack.exitCode).toBe(0);
    expect(output).toContain("SIGINT: stopping...");
    expect(output).not.toContain("API key:");
    expect(processesMentioning(dataDir)).toEqual([]);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 120_000);

test("the local stack without Chromium says at once what is missing and how to install it", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "bas-stack-nochromium-"));
  chmodSync(dataDir, 0o755); // were it to start its own Postgres, that user must reach its folder
  const chromium = join(dataDir, "no-chromium-here");
  try {
    const stack = startStack(dataDir, await freePort(), { CHROMIUM_PATH: chromium });
    let output = "";
    stack.stdout?.on("data", (chunk) => {
      output += chunk;
    });
    stack.stderr?.on("data", (chunk) => {
      output += chunk;
    });
    // Whatever happens, it ends: the old stack started without a word and came up "healthy"; it is stopped then.
    const banner = waitForLine(stack, /API key:/, 150_000, "local stack").then(
      () => stack.kill("SIGTERM"),
      () => undefined,
    );
    await waitForExit(stack, 180_000);
    await banner;
    expect(output).toContain(
      `Chromium not found at ${chromium}: install it (apt-get install -y chromium) or set CHROMIUM_PATH to where it is`,
    );
    expect(stack.exitCode).toBe(1);
    expect(processesMentioning(dataDir)).toEqual([]);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 200_000);
