import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { eventually } from "@bas/testing";
import { processesOfRun } from "../src/run-processes";

const ROOT = resolve(__dirname, "../../..");

const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
};

test("a jest run killed mid-test leaves no process running and no temp folder behind", async () => {
  const scratch = mkdtempSync(join(tmpdir(), "run-cleanup-"));
  const reportFile = join(scratch, "report.json");
  // A run of its own, as from a terminal: not part of this run's servers or folder.
  const { BAS_TEST_ROOT: _root, NATS_URL: _nats, DATABASE_URL: _db, ...env } = process.env;
  const jest = spawn(
    process.execPath,
    [join(ROOT, "node_modules/jest/bin/jest.js"), "--config", join(__dirname, "fixtures/jest.config.js")],
    { cwd: ROOT, env: { ...env, FIXTURE_REPORT: reportFile }, stdio: "ignore" },
  );
  try {
    const report = await eventually(
      async () => (existsSync(reportFile) ? JSON.parse(readFileSync(reportFile, "utf8")) : undefined),
      (r) => r !== undefined,
      60_000,
    );
    const running = processesOfRun(report.root);
    expect(running).toContain(report.nats);
    expect(running.length).toBeGreaterThanOrEqual(3); // and the run's own NATS and Postgres

    jest.kill("SIGKILL");

    await eventually(
      async () => running.filter(alive),
      (left) => left.length === 0,
      30_000,
    );
    await eventually(
      async () => existsSync(report.root),
      (exists) => !exists,
      10_000,
    );
  } finally {
    jest.kill("SIGKILL");
    rmSync(scratch, { recursive: true, force: true });
  }
});
