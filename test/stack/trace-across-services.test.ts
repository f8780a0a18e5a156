import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, waitForExit, waitForLine } from "@bas/embedded-infra";
import { createTestInfra, eventually, type TestInfra } from "@bas/testing";
import { type ExportedSpan, type OtlpCollector, startOtlpCollector } from "../support/otlp-collector";
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

test("one trace runs from the REST call through gRPC and the NATS work queue to the runner's steps and billing's charges", async () => {
  llm.script("trace", [
    toolCallReply("scroll", { direction: "down" }, { usage: { promptTokens: 321, completionTokens: 12 } }),
    toolCallReply("done", { success: true, text: "traced" }),
  ]);
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

  // The runner's task span: its trace must be the one the REST call started. Each service exports its spans in
  // batches of its own, so the trace is read once every part has sent the spans expected of it (billing's last).
  const expected: Array<[string, string]> = [
    ["sessions", "grpc.bas.v1.Sessions/CreateSession"],
    ["runner", "runner.task"],
    ["browser-pool", "grpc.bas.v1.BrowserPool/AcquireBrowser"],
    ["runner", "agent.decide"],
    ["runner", "agent.act"],
    // The runner's reports reach the sessions service inside the same trace.
    ["sessions", "grpc.bas.v1.RunnerReports/TaskCompleted"],
    ["billing", "billing.charge"],
  ];
  const findTask = () =>
    collector.spans().find((s) => s.name === "runner.task" && s.attributes["bas.session_id"] === id);
  const complete = (task: ExportedSpan | undefined) =>
    task !== undefined &&
    expected.every(([service, name]) =>
      collector.spans().some((d) => d.traceId === task.traceId && d.service === service && d.name === name),
    );
  // If a part never sends its spans, the assertion below names what is missing.
  await eventually(async () => findTask(), complete).catch(() => undefined);
  const task = findTask();
  expect(task).toBeDefined();
  const trace = collector.spans().filter((s) => s.traceId === task!.traceId);
  // One root: the gateway's span of the POST.
  const roots = trace.filter((s) => !s.parentSpanId);
  expect(roots).toHaveLength(1);
  expect(roots[0]).toMatchObject({ service: "gateway", attributes: { "url.path": "/api/v3/sessions" } });
  expect(trace.map((s) => `${s.service} ${s.name}`)).toEqual(
    expect.arrayContaining(expected.map(([service, name]) => `${service} ${name}`)),
  );
  expect(task!.attributes["bas.session_id"]).toBe(id);

  // A span per model call, inside its step's decision, with the model and the tokens the provider reported.
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  const parentOf = (span: ExportedSpan | undefined) => byId.get(span?.parentSpanId ?? "")?.name;
  const calls = trace.filter((s) => s.name === "model.call");
  expect(calls).toHaveLength(2);
  expect(calls.map(parentOf)).toEqual(["agent.decide", "agent.decide"]);
  const scrollDecision = calls.find((s) => Number(s.attributes["gen_ai.usage.input_tokens"]) === 321);
  expect(Number(scrollDecision?.attributes["gen_ai.usage.output_tokens"])).toBe(12);
  expect(scrollDecision?.attributes).toMatchObject({
    "gen_ai.request.model": expect.any(String),
    "bas.model": expect.any(String),
  });
  // A span per browser action, inside the step's acting.
  const actions = trace.filter((s) => s.name === "browser.action");
  expect(actions.map((s) => s.attributes)).toEqual([{ "bas.action": "scroll", "bas.action.error": false }]);
  expect(parentOf(actions[0])).toBe("agent.act");
  // Billing's charge of each model call joins the task's trace.
  const charges = trace.filter((s) => s.service === "billing" && s.name === "billing.charge");
  expect(charges.length).toBeGreaterThanOrEqual(1);
  expect(charges[0].attributes).toMatchObject({ "bas.usage.kind": "llm", "bas.charge.outcome": "charged" });
}, 240_000);
