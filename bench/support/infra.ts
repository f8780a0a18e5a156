import { mkdtempSync, chmodSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer, startPostgres } from "@bas/embedded-infra";

/**
 * NATS and Postgres for a benchmark: NATS_URL / DATABASE_URL if given, else throwaway ones (durable settings) whose
 * data lives under `root` (their processes name it in their arguments).
 */
export async function benchInfra(): Promise<{
  natsUrl: string;
  databaseUrl: string;
  root: string;
  close(): Promise<void>;
}> {
  const root = mkdtempSync(join(tmpdir(), "bas-bench-"));
  chmodSync(root, 0o755);
  const nats = process.env.NATS_URL ? undefined : await startNatsServer({ dataDir: join(root, "nats") });
  let pg: Awaited<ReturnType<typeof startPostgres>> | undefined;
  try {
    pg = process.env.DATABASE_URL ? undefined : await startPostgres({ dataDir: join(root, "pg"), database: "bench" });
  } catch (err) {
    // Nothing it started may outlive it: the NATS server started above goes too.
    await nats?.stop();
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  return {
    natsUrl: process.env.NATS_URL ?? nats!.url,
    databaseUrl: process.env.DATABASE_URL ?? pg!.url,
    root,
    async close() {
      await nats?.stop();
      await pg?.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
