import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, waitForExit, waitForLine } from "@bas/embedded-infra";
import { createTestInfra, eventually, type TestInfra } from "@bas/testing";
import { type OtlpCollector, startOtlpCollector } from "../support/otlp-collector";
import { type ScriptedLlm, startScriptedLlm, toolCallReply } from "../support/scripted-llm";

const ROOT = resolve(__dirname, "../..");

let infra: TestInfra;
let llm: ScriptedLlm;
let collector: OtlpCollector;
let stack: ChildProcess | undefined;
let dataDir: string;

beforeAll(async () => {
  infra = await createTestInfra();
  llm = await startScriptedLlm();
  dataDir = mkdtempSync(join(tmpdir(), "bas-trace-"));
  collector = await startOtlpCollector();
});
afterAll(async () => {
  if (stack && stack.exitCode === null) {
    stack.kill("SIGTERM");
    await waitForExit(stack, 60_000);
  }
  await collector.close();
  await llm.close();
  await infra.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test("one trace runs from the REST call through gRPC and the NATS work queue to the runner's steps", async () => {
  llm.script("trace", [toolCallReply("done", { success: true, text: "traced" })]);
  const port = await freePort();
  const apiKey = "bas_trace_test_key_0123456789abcdef";
  stack = spawn(process.execPath, ["--import", "tsx", "packages/local-stack/src/main.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      NATS_URL: process.env.NATS_URL,
      DATABASE_URL: infra.databaseUrl,
      NAMESPACE: infra.namespace,
      DATA_DIR: dataDir,
      PORT: String(port),
      BOOTSTRAP_API_KEY: apiKey,
      LLM_BASE_URL: llm.urlFor("trace"),
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_SDK_DISABLED: "false",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  await waitForLine(stack, /API key:/, 150_000, "local stack");

  const base = `http://127.0.0.1:${port}`;
  const headers = { "X-Service-API-Key": apiKey, "Content-Type": "application/json" };
  const created = await fetch(`${base}/api/v3/sessions`, {
    method: "POST",
    headers,
    body: JSON.stringify({ task: "Say traced", keepAlive: false }),
  });
  expect(created.status).toBe(200);
  const { id } = (await created.json()) as { id: string };
  const finished = await eventually(
    async () => (await (await fetch(`${base}/api/v3/sessions/${id}`, { headers })).json()) as { status: string },
    (s) => s.status === "stopped",
    60_000,
  );
  expect(finished).toMatchObject({ output: "traced", isTaskSuccessful: true });

  // The runner's task span: its trace must be the one the REST call started.
  const task = await eventually(
    async () => collector.spans().find((s) => s.name === "runner.task" && s.attributes["bas.session_id"] === id),
    (s) => s !== undefined && collector.spans().some((d) => d.traceId === s.traceId && d.name === "agent.decide"),
  );
  const trace = collector.spans().filter((s) => s.traceId === task!.traceId);
  // One root: the gateway's span of the POST.
  const roots = trace.filter((s) => !s.parentSpanId);
  expect(roots).toHaveLength(1);
  expect(roots[0]).toMatchObject({ service: "gateway", attributes: { "url.path": "/api/v3/sessions" } });
  expect(trace).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ service: "sessions", name: "grpc.bas.v1.Sessions/CreateSession" }),
      expect.objectContaining({ service: "runner", name: "runner.task" }),
      expect.objectContaining({ service: "browser-pool", name: "grpc.bas.v1.BrowserPool/AcquireBrowser" }),
      expect.objectContaining({ service: "runner", name: "agent.decide" }),
      expect.objectContaining({ service: "runner", name: "agent.act" }),
      // The runner's reports reach the sessions service inside the same trace.
      expect.objectContaining({ service: "sessions", name: "grpc.bas.v1.RunnerReports/TaskCompleted" }),
    ]),
  );
  expect(task!.attributes["bas.session_id"]).toBe(id);
}, 240_000);
