/**
 * The sessions service on its own, as a separate process: gRPC reads (GetSession, ListSessions page_size 100) under
 * 50 concurrent callers, and the latency of a runner report (StepRecorded: decide, append, wait for the read
 * models). Baselines from the same run: the bare read-model query from Postgres, and a bare event-store append.
 * `npx tsx bench/sessions-grpc.ts` (BENCH_SECONDS=10 per read figure by default).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createDatabaseIfMissing, freePort } from "@bas/embedded-infra";
import { createDb, createNatsEventStore, ensureStreams, streamNames } from "@bas/event-store";
import { sessions } from "@bas/proto";
import { checkGrpcHealth, connectClient, connectNats } from "@bas/service-kit";
import { sql } from "kysely";
import { benchInfra } from "./support/infra";
import { ms, summarize } from "./support/stats";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = 50;

async function underLoad(name: string, call: () => Promise<unknown>) {
  const latencies: number[] = [];
  const end = Date.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        const t = performance.now();
        await call();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const s = summarize(latencies);
  console.log(`${name.padEnd(44)} ${(s.n / SECONDS).toFixed(0).padStart(6)} req/s  p50 ${ms(s.p50)}  p99 ${ms(s.p99)}`);
}

async function sequential(name: string, n: number, call: (i: number) => Promise<unknown>) {
  const latencies: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await call(i);
    latencies.push(performance.now() - t);
  }
  const s = summarize(latencies);
  console.log(`${name.padEnd(44)} n=${s.n}  p50 ${ms(s.p50)}  p95 ${ms(s.p95)}  p99 ${ms(s.p99)}`);
}

async function main() {
  const infra = await benchInfra();
  const namespace = `bench${randomBytes(4).toString("hex")}`;
  // A database of its own: read-model checkpoints are per database, so one namespace per database.
  const database = new URL(infra.databaseUrl);
  const admin = new URL(database);
  admin.pathname = "/postgres";
  database.pathname = `/${namespace}`;
  await createDatabaseIfMissing(admin.toString(), namespace);
  const databaseUrl = database.toString();
  const port = await freePort();
  const env = {
    ...process.env,
    NATS_URL: infra.natsUrl,
    DATABASE_URL: databaseUrl,
    NAMESPACE: namespace,
    GRPC_PORT: String(port),
    METRICS_PORT: "0",
    SMTP_PORT: "0",
    LOG_LEVEL: "warn",
    SECRETS_KEY: randomBytes(32).toString("hex"),
    MAX_ACTIVE_SESSIONS_PER_PROJECT: "1000",
  };
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []),
      "--import",
      "tsx",
      join(__dirname, "../services/sessions/src/main.ts"),
    ],
    { env, stdio: ["ignore", "inherit", "inherit"] },
  );
  const address = `127.0.0.1:${port}`;
  try {
    while (!(await checkGrpcHealth(address))) await sleep(100);
    const api = connectClient(sessions.SessionsClient, address);
    const reports = connectClient(sessions.RunnerReportsClient, address);
    const projectId = `bench-${randomUUID()}`;
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      ids.push(
        (await api.createSession(sessions.CreateSessionRequest.fromPartial({ projectId, model: "svc-max" }))).id,
      );
    }
    console.log(`sessions service (separate process), ${CONCURRENCY} concurrent callers, ${SECONDS} s per read figure`);

    const db = createDb<any>(databaseUrl, { max: 20 });
    const one = ids[100];
    await underLoad("baseline: read-model row straight from Postgres", () =>
      sql`select s.doc, c.total_cost_usd from sessions_view s left join session_costs c on c.session_id = s.id
          where s.id = ${one} and s.project_id = ${projectId} and not s.deleted`.execute(db),
    );
    await underLoad("GetSession over gRPC", () => api.getSession({ projectId, sessionId: one }));
    await underLoad("ListSessions page_size=100 over gRPC", () =>
      api.listSessions({ projectId, page: 1, pageSize: 100 }),
    );

    const nats = await connectNats(infra.natsUrl, "bench");
    const streams = streamNames(namespace);
    await ensureStreams(nats.jsm, streams);
    const store = createNatsEventStore({ ...nats, streams });
    const scratch = { type: "bench", id: randomUUID() };
    let version = 0;
    await sequential("baseline: bare event-store append", 300, async () => {
      version = (await store.append(scratch, [{ type: "Tick", data: {} }], version)).version;
    });
    const sessionId = ids[0];
    await reports.sandboxReady({ sessionId, browserId: "bench" });
    await api.createSession(
      sessions.CreateSessionRequest.fromPartial({
        projectId,
        model: "svc-max",
        sessionId,
        task: "bench",
        keepAlive: true,
      }),
    );
    const taskId = await currentTaskId(store, sessionId);
    await sequential("StepRecorded report (read-your-writes)", 300, (i) =>
      reports.stepRecorded({ sessionId, taskId, step: i + 1, summary: `step ${i}`, messages: [] }),
    );
    api.close();
    reports.close();
    await nats.nc.drain();
    await db.destroy();
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
    await infra.close();
  }
}

/** The task the service dispatched, as the runner would learn it (from the session's events here). */
async function currentTaskId(store: ReturnType<typeof createNatsEventStore>, sessionId: string): Promise<string> {
  const { events } = await store.load({ type: "session", id: sessionId });
  const dispatched = events.filter((e) => e.type === "TaskDispatched").pop();
  if (!dispatched) throw new Error("no task was dispatched");
  return (dispatched.data as { taskId: string }).taskId;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
