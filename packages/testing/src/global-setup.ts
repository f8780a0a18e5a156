import { chmodSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer, startPostgres } from "@bas/embedded-infra";

/**
 * Starts one throwaway nats-server and one Postgres cluster for the whole jest run, unless NATS_URL / DATABASE_URL
 * point at existing ones. Workers inherit the URLs through the environment; each test isolates itself with its
 * own namespace (streams) and database.
 */
export default async function globalSetup(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "bas-test-"));
  chmodSync(root, 0o755); // the postgres user must be able to reach its data dir inside
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
  process.env.BAS_TEST_ROOT = root;
  process.env.XDG_CONFIG_HOME ??= join(root, "xdg-config");
  process.env.XDG_CACHE_HOME ??= join(root, "xdg-cache");
  (globalThis as { __basInfraStops?: typeof stops }).__basInfraStops = stops;
}
