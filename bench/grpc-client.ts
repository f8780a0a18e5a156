/**
 * Our gRPC client wrapper (`promiseClient` over the ts-proto grpc-js client) against nice-grpc and against the bare
 * grpc-js client, on one unary call (sessions' GetSession answered with a fixed session) to a server in a process
 * of its own. Each client: sequential latency and throughput under 50 concurrent callers, in interleaved rounds so that
 * drift hits all three alike. Decides whether nice-grpc would be worth adopting (issue 11).
 * `npx tsx bench/grpc-client.ts` (BENCH_SECONDS=3 per throughput figure, BENCH_ROUNDS=3).
 */
import { fork } from "node:child_process";
import { sessions } from "@bas/proto";
import { connectClient, createGrpcServer } from "@bas/service-kit";
import { credentials } from "@grpc/grpc-js";
import { createChannel, createClient } from "nice-grpc";
import { ms, summarize } from "./support/stats";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SEQUENTIAL_CALLS = 3_000;
const CONCURRENCY = 50;

const SESSION = sessions.Session.fromPartial({
  id: "7f1c1c4e-8c1f-4a6e-9a57-0d1a2b3c4d5e",
  projectId: "0d9a1f7e-3b2c-4d5e-8f90-a1b2c3d4e5f6",
  status: "running",
  model: "gpt-4.1-mini",
  stepCount: 12,
  llmCostUsd: "0.0123",
  totalCostUsd: "0.0140",
  createdAt: new Date(),
  updatedAt: new Date(),
});

async function serve() {
  const server = createGrpcServer();
  server.add(sessions.SessionsService, {
    getSession: (_call: unknown, callback: (err: null, res: sessions.Session) => void) => callback(null, SESSION),
  } as any);
  const port = await server.listen("127.0.0.1", 0);
  server.setHealth("SERVING");
  process.send!(port);
}

type Call = () => Promise<unknown>;

async function sequential(call: Call): Promise<number> {
  const latencies: number[] = [];
  for (let i = 0; i < SEQUENTIAL_CALLS; i++) {
    const t = performance.now();
    await call();
    latencies.push(performance.now() - t);
  }
  return summarize(latencies).p50;
}

async function throughput(call: Call): Promise<number> {
  let calls = 0;
  const end = Date.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        await call();
        calls++;
      }
    }),
  );
  return calls / SECONDS;
}

async function main() {
  const server = fork(__filename, ["serve"], { execArgv: ["--import", "tsx"] });
  const port = await new Promise<number>((resolve) => server.once("message", (m) => resolve(m as number)));
  const address = `127.0.0.1:${port}`;
  const request = { projectId: SESSION.projectId, sessionId: SESSION.id };

  const bare = new sessions.SessionsClient(address, credentials.createInsecure());
  const ours = connectClient(sessions.SessionsClient, address);
  const channel = createChannel(address);
  const nice = createClient(sessions.SessionsService, channel);
  const clients: Record<string, Call> = {
    "grpc-js, bare callback in a promise": () =>
      new Promise((resolve, reject) => bare.getSession(request, (err, res) => (err ? reject(err) : resolve(res)))),
    "ours (promiseClient, deadline per call)": () => ours.getSession(request),
    // nice-grpc's core has no deadline option (that is a middleware): a timeout signal does the same.
    "nice-grpc (timeout per call)": () => nice.getSession(request, { signal: AbortSignal.timeout(10_000) }),
  };
  const results = new Map(Object.keys(clients).map((name) => [name, { p50: [] as number[], rps: [] as number[] }]));
  for (const call of Object.values(clients)) await sequential(call); // warm-up: connections, JIT
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, call] of Object.entries(clients)) {
      results.get(name)!.p50.push(await sequential(call));
      results.get(name)!.rps.push(await throughput(call));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const baseline = median(results.get("grpc-js, bare callback in a promise")!.rps);
  console.log(`one unary call, server in its own process; median of ${ROUNDS} rounds`);
  for (const [name, r] of results) {
    const rps = median(r.rps);
    console.log(
      `${name.padEnd(42)} sequential p50 ${ms(median(r.p50))}   ${CONCURRENCY} callers ${rps.toFixed(0).padStart(6)} calls/s (${(rps / baseline).toFixed(2)}× bare)`,
    );
  }
  bare.close();
  ours.close();
  channel.close();
  server.kill();
}

if (process.argv[2] === "serve") void serve();
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
