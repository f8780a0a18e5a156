import autocannon from "autocannon";
import pg from "pg";
import { sessions } from "@bas/proto";
import { connectClient } from "@bas/service-kit";
import { benchInfra } from "./support/infra";
import { startReadPath } from "./support/read-path";
import { httpLoad } from "./support/http-load";
import { percentile } from "./support/stats";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const CONNECTIONS = 100;
const RUNS = 100_000;
/** Runs stepping at once, each with its stream (BENCH_STREAMS); 1 shows the latency without queueing. */
const STREAMS = Number(process.env.BENCH_STREAMS ?? 20);
/** How often each run reports a step (BENCH_STEP_MS): an agent that steps every second is a fast one. */
const STEP_EVERY_MS = Number(process.env.BENCH_STEP_MS ?? 1_000);
const STEPS_PER_STREAM = 15;

/** `rate`: a fixed load (req/s) instead of as fast as answers come back. */
const load = (title: string, url: string, key: string, paths: string[], rate?: number) =>
  httpLoad(title, { url, key, paths, connections: CONNECTIONS, seconds: SECONDS, rate });
const FIXED_RATE = 3_000;

/** Rows of the v4 read model for `count` runs of `projectId`, one conversation each, in batches. */
async function seedRuns(databaseUrl: string, projectId: string, count: number) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (let done = 0; done < count; done += 10_000) {
      const n = Math.min(10_000, count - done);
      await client.query(
        `with ids as (
           select gen_random_uuid()::text as run_id, gen_random_uuid()::text as session_id,
                  now() - interval '1 hour' - (g * interval '1 second') as at
           from generate_series(1, $2::int) g),
         s as (insert into v4_sessions (session_id, project_id, workspace_id, model, sandbox_ready, latest_run_id,
             created_at, updated_at)
           select session_id, $1, null, 'svc-max', true, run_id, at, at from ids)
         insert into v4_runs (id, session_id, project_id, task, title, model, status, result, error, input_tokens,
             output_tokens, created_at, updated_at)
           select run_id, session_id, $1, 'seeded task', 'Seeded', 'svc-max', 'completed', 'done', null, 1200, 300, at, at
           from ids`,
        [projectId, n],
      );
    }
    const { rows } = await client.query("select id from v4_runs where project_id = $1 order by random() limit 5000", [
      projectId,
    ]);
    return rows.map((r: { id: string }) => r.id);
  } finally {
    await client.end();
  }
}

/** Reads an SSE response, calling `onEvent` with each event's data as it arrives. */
async function readStream(res: Response, onEvent: (data: any) => void) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    buffer += decoder.decode(chunk.value, { stream: true });
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const data = buffer
        .slice(0, end)
        .split("\n")
        .find((line) => line.startsWith("data: "));
      buffer = buffer.slice(end + 2);
      if (data) onEvent(JSON.parse(data.slice(6)));
    }
  }
}

/**
 * Event → SSE delivery: from the step report being sent to its event reaching the stream's reader. With
 * `stepEveryMs` each run reports a step on that schedule (runs staggered), as agents do; without it each reports its
 * next step the moment the last one arrived, which measures the pipeline at its throughput limit (queueing included).
 */
async function sseDelivery(
  url: string,
  key: string,
  reports: ReturnType<typeof runnerClient>,
  stepEveryMs?: number,
): Promise<{ latencies: number[]; eventsPerSecond: number }> {
  const latencies: number[] = [];
  const streams = await Promise.all(
    Array.from({ length: STREAMS }, async () => {
      const res = await fetch(`${url}/api/v4/runs`, {
        method: "POST",
        headers: { "X-Service-API-Key": key, "Content-Type": "application/json" },
        body: JSON.stringify({ task: "streamed" }),
      });
      const run = (await res.json()) as { id: string; sessionId: string };
      await reports.sandboxReady({ sessionId: run.sessionId, browserId: `b-${run.id}` });
      await reports.taskStarted({ sessionId: run.sessionId, taskId: run.id, title: "Streamed", attempt: 1 });
      const controller = new AbortController();
      const stream = await fetch(`${url}/api/v4/runs/${run.id}/events`, {
        headers: { "X-Service-API-Key": key, Accept: "text/event-stream" },
        signal: controller.signal,
      });
      const sentAt = new Map<number, number>();
      const arrived = new Map<number, () => void>();
      const reading = readStream(stream, (event) => {
        const step = event.data?.step;
        if (event.type !== "run.step" || !sentAt.has(step)) return;
        latencies.push(performance.now() - sentAt.get(step)!);
        arrived.get(step)?.();
      }).catch(() => undefined);
      return { run, sentAt, arrived, controller, reading };
    }),
  );
  const startedAt = performance.now();
  await Promise.all(
    streams.map(async ({ run, sentAt, arrived }, i) => {
      for (let step = 1; step <= STEPS_PER_STREAM; step++) {
        if (stepEveryMs) {
          const dueAt = startedAt + (i / streams.length + step - 1) * stepEveryMs;
          await new Promise((r) => setTimeout(r, Math.max(0, dueAt - performance.now())));
        }
        const delivered = new Promise<void>((resolve) => arrived.set(step, resolve));
        sentAt.set(step, performance.now());
        await reports.stepRecorded({
          sessionId: run.sessionId,
          taskId: run.id,
          step,
          summary: `Step ${step}`,
          messages: [],
        });
        if (!stepEveryMs || step === STEPS_PER_STREAM) await delivered;
      }
    }),
  );
  const eventsPerSecond = (STREAMS * STEPS_PER_STREAM) / ((performance.now() - startedAt) / 1000);
  for (const s of streams) s.controller.abort();
  await Promise.all(streams.map((s) => s.reading));
  return { latencies, eventsPerSecond };
}

const runnerClient = (address: string) => connectClient(sessions.RunnerReportsClient, address);

async function main() {
  const infra = await benchInfra();
  // A read path that fails to start has stopped what it started; the infrastructure is this function's to close.
  const path = await startReadPath(infra).catch(async (err) => {
    await infra.close();
    throw err;
  });
  const { key, sessionsPort } = path;
  try {
    const { url } = await path.startGateway("gateway");
    const { url: uncachedUrl } = await path.startGateway("gateway-uncached", { SESSION_CACHE_TTL_MS: "0" });

    // The project's id, from a run made through the API; then the other 99,999 as read-model rows.
    const first = await fetch(`${url}/api/v4/runs`, {
      method: "POST",
      headers: { "X-Service-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify({ task: "the first run" }),
    });
    if (first.status !== 200) throw new Error(`creating a run failed: ${first.status} ${await first.text()}`);
    const { id: firstId } = (await first.json()) as { id: string };
    const client = new pg.Client({ connectionString: infra.databaseUrl });
    await client.connect();
    const projectId = (await client.query("select project_id from v4_runs where id = $1", [firstId])).rows[0]
      .project_id;
    await client.end();
    const seededAt = performance.now();
    const ids = await seedRuns(infra.databaseUrl, projectId, RUNS - 1);
    console.log(`seeded ${RUNS - 1} runs in ${Math.round(performance.now() - seededAt)} ms`);

    // Warm up connections and the JIT on both routes of both gateways.
    for (const base of [url, uncachedUrl])
      for (const path of [`/api/v4/runs/${ids[0]}/status`, `/api/v4/runs/${ids[0]}`])
        await autocannon({ url: base + path, connections: 10, duration: 2, headers: { "X-Service-API-Key": key } });

    const full = await load(
      "GET /api/v4/runs/{id} (baseline)",
      url,
      key,
      ids.map((id) => `/api/v4/runs/${id}`),
    );
    const statusPaths = ids.map((id) => `/api/v4/runs/${id}/status`);
    const status = await load("GET /api/v4/runs/{id}/status", url, key, statusPaths);
    const fixed = await load(
      `GET /api/v4/runs/{id}/status at a fixed ${FIXED_RATE} req/s`,
      url,
      key,
      statusPaths,
      FIXED_RATE,
    );
    const uncached = await load("GET /api/v4/runs/{id}/status, no gateway cache", uncachedUrl, key, statusPaths);
    const reports = runnerClient(`127.0.0.1:${sessionsPort}`);
    const paced = await sseDelivery(url, key, reports, STEP_EVERY_MS);
    const flat = await sseDelivery(url, key, reports);

    console.log(`\n${RUNS} runs, ${CONNECTIONS} connections, ${SECONDS} s per load, gateway and sessions as processes`);
    console.table([full, status, fixed, uncached]);
    const ratio = status["req/s"] / full["req/s"];
    const p99 = percentile(paced.latencies, 99);
    console.log(`status / full read throughput: ${ratio.toFixed(2)}×`);
    const delivery = (what: string, { latencies, eventsPerSecond }: typeof paced) =>
      console.log(
        `event → SSE delivery, ${STREAMS} runs ${what} (${eventsPerSecond.toFixed(0)} events/s): ` +
          `p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, ` +
          `max ${Math.max(...latencies).toFixed(1)} ms over ${latencies.length} events`,
      );
    delivery(`each stepping every ${STEP_EVERY_MS} ms`, paced);
    delivery("each stepping as soon as its last step arrived (throughput limit)", flat);
    const met = (ok: boolean) => (ok ? "met" : "NOT met");
    console.log(`status ≥ 3,000 req/s: ${met(status["req/s"] >= 3000)}`);
    console.log(
      `status p99 < 15 ms at ${FIXED_RATE} req/s: ${met(fixed["p99 ms"] < 15 && fixed["req/s"] >= FIXED_RATE * 0.98)}`,
    );
    console.log(`status ≥ 1.5× the full read: ${met(ratio >= 1.5)}`);
    console.log(`SSE delivery p99 < 50 ms (runs stepping every ${STEP_EVERY_MS} ms): ${met(p99 < 50)}`);
  } finally {
    await path.stop();
    await infra.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
