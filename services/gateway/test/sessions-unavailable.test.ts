import { randomBytes } from "node:crypto";
import { createDb } from "@bas/event-store";
import { gateway as gatewayProto } from "@bas/proto";
import { connectClient } from "@bas/service-kit";
import { createTestDatabase, eventually } from "@bas/testing";
import { type Kysely, sql } from "kysely";
import { type Stack, startStack } from "./harness";

// The sessions service on a database of its own, so that it can be cut off while the gateway's stays reachable; a
// gateway deadline of 5 s (10 by default), so that a create that cannot finish in time fails sooner; not shorter:
// a create right after the database came back must still finish within it on a slow machine.
let stack: Stack;
let sessionsDatabase: string;
let admin: Kysely<any>;

beforeAll(async () => {
  const url = await createTestDatabase();
  sessionsDatabase = new URL(url).pathname.slice(1);
  const adminUrl = new URL(url);
  adminUrl.pathname = "/postgres";
  admin = createDb(adminUrl.toString(), { max: 1 });
  stack = await startStack({ env: { GRPC_DEADLINE_MS: "5000" }, sessionsEnv: { DATABASE_URL: url } });
});
afterAll(async () => {
  await stack.close();
  await admin.destroy();
});

/** A new project and its key, through the gateway's admin API. */
async function newProject(): Promise<{ id: string; key: string }> {
  const client = connectClient(gatewayProto.ProjectAdminClient, `127.0.0.1:${stack.gateway.grpcPort}`);
  try {
    const project = await client.createProject({ name: `p-${randomBytes(4).toString("hex")}` });
    return { id: project.id, key: (await client.createApiKey({ projectId: project.id, label: "test" })).plainKey };
  } finally {
    client.close();
  }
}

const create = (key: string) =>
  stack.request("POST", "/api/v3/sessions", { key, body: { task: "Find the top story" } });

test("a create that cannot finish before the deadline answers 503, and nothing is created for it, ever", async () => {
  const project = await newProject();
  // Another replica holds the project's create lock for longer than the gateway waits.
  const holder = createDb(new URL(`/${sessionsDatabase}`, stack.infra.databaseUrl).toString(), { max: 1 });
  try {
    await holder.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(hashtext(${`sessions-create:${project.id}`}))`.execute(conn);
      const refused = await create(project.key);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("1");
      await sql`select pg_advisory_unlock(hashtext(${`sessions-create:${project.id}`}))`.execute(conn);
    });
  } finally {
    await holder.destroy();
  }
  // The next create of the project queues behind whatever the refused one still did, so once it answers, the
  // refused one is over too: only the new session exists.
  const created = await create(project.key);
  expect(created.status).toBe(200);
  const listed = await stack.request("GET", "/api/v3/sessions", { key: project.key });
  expect(listed.body.sessions.map((s: { id: string }) => s.id)).toEqual([created.body.id]);
});

// (Browser-pool, runner and billing are not configured here, so /healthz is 503 throughout; the sessions check is
// what changes.)
test("/healthz names the sessions service while it cannot reach its database, and ok once it can again", async () => {
  const db = sql.id(sessionsDatabase);
  await sql`alter database ${db} allow_connections false`.execute(admin);
  try {
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${sessionsDatabase}`.execute(
      admin,
    );
    const down = await eventually(
      () => stack.request("GET", "/healthz", { key: null }),
      (r) => r.body.checks.sessions === "down",
    );
    expect(down.status).toBe(503);
    expect(down.body.checks).toMatchObject({ database: "ok", eventStore: "ok" });
    expect(down.body.detail).toContain("sessions: down");
  } finally {
    await sql`alter database ${db} allow_connections true`.execute(admin);
  }
  await eventually(
    () => stack.request("GET", "/healthz", { key: null }),
    (r) => r.body.checks.sessions === "ok",
  );
  const project = await newProject();
  expect((await create(project.key)).status).toBe(200);
});
