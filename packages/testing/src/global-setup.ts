import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer, startPostgres } from "@bas/embedded-infra";

/**
 * Gives the run a temp folder of its own and starts one throwaway nats-server and one Postgres cluster for it,
 * unless NATS_URL / DATABASE_URL point at existing ones. Workers inherit the URLs through the environment; each test
 * isolates itself with its own namespace (streams) and database.
 *
 * Nothing outlives the run: every temp folder a test (or a server, or Chromium) makes lands in the run's folder
 * (TMPDIR), which globalTeardown deletes, and every process started under the run carries BAS_TEST_ROOT, by which
 * globalTeardown, or the janitor if jest is killed before it, finds and ends what is left.
 */
export default async function globalSetup(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "bas-test-"));
  // A /tmp of its own: the postgres user and the browsers' users create their files in it too.
  chmodSync(root, 0o1777);
  const janitor = spawn(
    process.execPath,
    ["--import", "tsx", join(__dirname, "run-janitor.ts"), String(process.pid), root],
    // Its own compile cache goes in the run's folder too, which it deletes last.
    { detached: true, stdio: "ignore", env: { ...process.env, TMPDIR: root } },
  );
  janitor.unref();
  process.env.BAS_TEST_ROOT = root; // after the janitor started: it is not one of the processes it ends
  process.env.TMPDIR = root;
  (globalThis as { __basJanitor?: number }).__basJanitor = janitor.pid;

  const stops: Array<() => Promise<void>> = [];
  const [nats, pg] = await Promise.all([
    process.env.NATS_URL ? undefined : startNatsServer({ dataDir: join(root, "nats") }),
    process.env.DATABASE_URL
      ? undefined
      : startPostgres({ dataDir: join(root, "pg"), database: "bas_test", fast: true }),
  ]);
  if (nats) {
    process.env.NATS_URL = nats.url;
    stops.push(nats.stop);
  }
  if (pg) {
    process.env.DATABASE_URL = pg.url;
    stops.push(pg.stop);
  }
  process.env.XDG_CONFIG_HOME ??= join(root, "xdg-config");
  process.env.XDG_CACHE_HOME ??= join(root, "xdg-cache");
  (globalThis as { __basInfraStops?: typeof stops }).__basInfraStops = stops;
}
