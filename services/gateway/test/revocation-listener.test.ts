import { createTestDatabase, eventually, startSeverableLink } from "@bas/testing";
import { Client } from "pg";
import { KEY_REVOKED_CHANNEL } from "../src/adapters/pg/pg-project-store";
import { startRevocationListener } from "../src/adapters/pg/revocation-listener";

/** The listener's own connection to Postgres, when it dies without a word. */
test("a connection that goes silent is noticed and replaced: revocations arrive again, and the caches are dropped", async () => {
  const databaseUrl = new URL(await createTestDatabase());
  const link = await startSeverableLink({ host: databaseUrl.hostname, port: Number(databaseUrl.port || 5432) });
  const throughLink = new URL(databaseUrl);
  throughLink.host = link.address;
  const revoked: string[] = [];
  let resyncs = 0;
  const warnings: string[] = [];
  const listener = await startRevocationListener({
    connectionString: throughLink.toString(),
    onRevoked: (keyId) => revoked.push(keyId),
    onResync: () => resyncs++,
    log: { warn: (_o, msg) => warnings.push(msg) },
    heartbeatMs: 200,
    timeoutMs: 2_000,
  });
  const notifier = new Client({ connectionString: databaseUrl.toString() });
  await notifier.connect();
  const revoke = (keyId: string) => notifier.query("select pg_notify($1, $2)", [KEY_REVOKED_CHANNEL, keyId]);
  try {
    await revoke("before");
    await eventually(
      async () => revoked,
      (list) => list.includes("before"),
    );
    expect(resyncs).toBeGreaterThanOrEqual(1);

    // The network loses everything from now on, closing nothing: only the listener's own check can tell. (A check
    // that is merely slow on a loaded machine also counts as a loss: hence the counts before and after, not totals.)
    const [warned, resynced] = [warnings.length, resyncs];
    link.blackhole();
    await eventually(
      async () => warnings.length,
      (n) => n > warned,
      15_000,
    );
    expect(warnings.at(-1)).toBe("revocation listener lost its connection; reconnecting");
    await revoke("while-silent");
    link.restore();

    await eventually(
      async () => resyncs,
      (n) => n > resynced,
      15_000,
    );
    let sent = 0;
    await eventually(
      async () => {
        await revoke(`after-${++sent}`);
        return revoked;
      },
      (list) => list.some((id) => id.startsWith("after-")),
    );
    // What was announced while it was cut off never came (no connection could listen); the resync dropped the
    // caches in its stead.
    expect(revoked).not.toContain("while-silent");

    // Closing does not hang on a connection that has gone silent.
    link.blackhole();
    await listener.close();
  } finally {
    await listener.close();
    await notifier.end();
    await link.close();
  }
});
