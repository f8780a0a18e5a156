import { createTestDatabase } from "@bas/testing";
import { sql } from "kysely";
import { createDb, migrate } from "../src";

const table = (name: string) => ({
  async up(db: any) {
    await sql`create table ${sql.table(name)} (id int)`.execute(db);
  },
});

test("an upgrade runs the new migrations; two of one number are refused before anything runs", async () => {
  const db = createDb(await createTestDatabase());
  try {
    await migrate(db, "svc", { "001_a": table("a"), "002_b": table("b") });
    // The next release adds one: it runs on the database that ran the first two.
    await migrate(db, "svc", { "001_a": table("a"), "002_b": table("b"), "003_c": table("c") });
    // A new migration that took a number already used would sort before one that ran ("002_aa" < "002_b").
    await expect(
      migrate(db, "svc", { "001_a": table("a"), "002_b": table("b"), "003_c": table("c"), "002_aa": table("aa") }),
    ).rejects.toThrow("migrations of svc use the number 002 twice: give the newer one the next number");
    const { rows } = await sql<{ name: string }>`select name from svc_migrations order by name`.execute(db);
    expect(rows.map((r) => r.name)).toEqual(["001_a", "002_b", "003_c"]);
  } finally {
    await db.destroy();
  }
});
