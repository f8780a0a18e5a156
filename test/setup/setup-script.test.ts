import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const SCRIPT = resolve(__dirname, "../../scripts/setup.sh");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "setup-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function osRelease(name: string, content: string): string {
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}

/** Runs `npm run setup`'s script as a user who may not install anything. */
function setup(env: Record<string, string>) {
  const run = spawnSync("bash", [SCRIPT], {
    env: { ...process.env, SETUP_CAN_INSTALL: "no", ...env },
    encoding: "utf8",
  });
  return { status: run.status, out: run.stdout + run.stderr };
}

test("with everything installed it says so and succeeds without installing anything", () => {
  const run = setup({});
  expect(run.status).toBe(0);
  expect(run.out).toMatch(/everything the service needs is installed/);
});

test("on Debian, without the right to install, it prints the exact apt command for what is missing and fails", () => {
  const run = setup({
    SETUP_ASSUME_MISSING: "postgres chromium bwrap",
    SETUP_OS_RELEASE: osRelease("debian", 'ID=debian\nVERSION_ID="12"\n'),
  });
  expect(run.status).toBe(1);
  expect(run.out).toContain("missing: postgres chromium bwrap");
  expect(run.out).toContain(
    "sudo apt-get update && sudo apt-get install -y --no-install-recommends postgresql chromium bubblewrap",
  );
});

test("on Ubuntu and on Fedora the command uses their package manager and package names", () => {
  const ubuntu = setup({
    SETUP_ASSUME_MISSING: "nats-server",
    SETUP_OS_RELEASE: osRelease("ubuntu", "ID=ubuntu\nID_LIKE=debian\n"),
  });
  expect(ubuntu.out).toContain("sudo apt-get install -y --no-install-recommends nats-server");
  const fedora = setup({
    SETUP_ASSUME_MISSING: "postgres ffmpeg socat",
    SETUP_OS_RELEASE: osRelease("fedora", "ID=fedora\n"),
  });
  expect(fedora.status).toBe(1);
  expect(fedora.out).toContain("sudo dnf install -y postgresql-server ffmpeg-free socat");
});

test("on macOS it prints the Homebrew command and says the browser sandbox needs Linux", () => {
  const run = setup({ SETUP_UNAME: "Darwin", SETUP_ASSUME_MISSING: "nats-server postgres" });
  expect(run.status).toBe(1);
  expect(run.out).toContain("brew install nats-server postgresql@16");
  expect(run.out).toMatch(/bubblewrap sandbox, which needs Linux/);
});

test("an OS it does not know: it names what is missing and the variables that point at existing servers", () => {
  const run = setup({ SETUP_ASSUME_MISSING: "chromium", SETUP_OS_RELEASE: osRelease("arch", "ID=arch\n") });
  expect(run.status).toBe(1);
  expect(run.out).toContain("missing: chromium");
  expect(run.out).toContain("CHROMIUM_PATH");
});
