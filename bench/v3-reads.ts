import autocannon from "autocannon";
import { gateway, sessions } from "@bas/proto";
import { connectClient } from "@bas/service-kit";
import { benchInfra } from "./support/infra";
import { startReadPath } from "./support/read-path";
import { httpLoad } from "./support/http-load";
import { percentile } from "./support/stats";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const CONNECTIONS = 50;
const SEEDED = 100;

/** `expected`: the status every answer should have (422 for the validation baseline); `rate`: a fixed load. */
const load = (title: string, url: string, key: string, paths: string[], expected = 200, rate?: number) =>
  httpLoad(title, { url, key, paths, connections: CONNECTIONS, seconds: SECONDS, expected, rate });

/** The sessions service alone: the same reads as gRPC calls, 50 in flight, from this process. */
async function grpcLoad(title: string, address: string, projectId: string, ids: string[]) {
  const client = connectClient(sessions.SessionsClient, address);
  const latencies: number[] = [];
  let errors = 0;
  let i = 0;
  const end = Date.now() + SECONDS * 1000;
  const worker = async () => {
    while (Date.now() < end) {
      const started = performance.now();
      try {
        await client.getSession({ projectId, sessionId: ids[i++ % ids.length] });
        latencies.push(performance.now() - started);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  client.close();
  return {
    title,
    "req/s": Math.round(latencies.length / SECONDS),
    "p50 ms": Math.round(percentile(latencies, 50)),
    "p99 ms": Math.round(percentile(latencies, 99)),
    "max ms": Math.round(Math.max(...latencies)),
    requests: latencies.length,
    "unexpected/errors": errors,
  };
}

async function main() {
  const infra = await benchInfra();
  // A read path that fails to start has stopped what it started; the infrastructure is this function's to close.
  const path = await startReadPath(infra).catch(async (err) => {
    await infra.close();
    throw err;
  });
  const { key, sessionsPort } = path;
  try {
    const { url, adminPort } = await path.startGateway("gateway");

    const ids: string[] = [];
    let projectId = "";
    for (let i = 0; i < SEEDED; i++) {
      const res = await fetch(`${url}/api/v3/sessions`, {
        method: "POST",
        headers: { "X-Service-API-Key": key, "Content-Type": "application/json" },
        body: JSON.stringify({ task: `seeded task ${i}`, keepAlive: true }),
      });
      if (res.status !== 200) throw new Error(`seeding failed: ${res.status} ${await res.text()}`);
      ids.push(((await res.json()) as { id: string }).id);
    }
    {
      const admin = connectClient(gateway.ProjectAdminClient, `127.0.0.1:${adminPort}`);
      projectId = (await admin.listProjects({})).projects.find((p) => p.name === "default")!.id;
      admin.close();
    }
    // Warm up connections, caches and the JIT before measuring.
    await autocannon({
      url: `${url}/api/v3/sessions/${ids[0]}`,
      connections: 10,
      duration: 2,
      headers: { "X-Service-API-Key": key },
    });

    const rows = [
      await load("baseline: gateway alone (auth + 422, no gRPC)", url, key, ["/api/v3/sessions/not-a-uuid"], 422),
      await grpcLoad("baseline: sessions gRPC GetSession alone", `127.0.0.1:${sessionsPort}`, projectId, ids),
      await load(
        "GET /api/v3/sessions/{id}",
        url,
        key,
        ids.map((id) => `/api/v3/sessions/${id}`),
      ),
      await load(
        "GET /api/v3/sessions/{id} at a fixed 1,500 req/s",
        url,
        key,
        ids.map((id) => `/api/v3/sessions/${id}`),
        200,
        1500,
      ),
      await load("GET /api/v3/sessions?page_size=100", url, key, ["/api/v3/sessions?page_size=100"]),
    ];
    console.log(
      `\n${SEEDED} sessions, ${CONNECTIONS} connections, ${SECONDS} s per run, gateway and sessions as processes`,
    );
    console.table(rows);
    // The setup is the closed loop (50 connections): both figures are read there. The fixed-rate row shows
    // the latency at that pace (requests evenly spaced, latency counted from when each was due).
    const closed = rows[2];
    const met = (ok: boolean) => (ok ? "met" : "NOT met");
    console.log(
      `single-session read ≥ 1,500 req/s with p99 < 20 ms (50 connections): ${met(closed["req/s"] >= 1500 && closed["p99 ms"] < 20)}`,
    );
  } finally {
    await path.stop();
    await infra.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
