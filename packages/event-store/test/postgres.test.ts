import { createTestDatabase } from "@bas/testing";
import { createPool } from "../src";

// What this buys (a dead node's locks freed in ~20 s instead of two hours) needs a peer that vanishes without a word,
// which only a network namespace can stage; docs/deploy.md has the figure. Here: every connection carries the setting.
test("Postgres probes each pooled connection after 10 s of silence, also a connection opened later", async () => {
  const pool = createPool(await createTestDatabase(), { max: 2 });
  try {
    const [a, b] = [await pool.connect(), await pool.connect()];
    try {
      for (const client of [a, b]) {
        const { rows } = await client.query(
          "select current_setting('tcp_keepalives_idle') as idle, current_setting('tcp_keepalives_interval') as every, current_setting('tcp_keepalives_count') as count",
        );
        expect(rows[0]).toEqual({ idle: "10", every: "5", count: "3" });
      }
    } finally {
      a.release();
      b.release();
    }
  } finally {
    await pool.end();
  }
});
