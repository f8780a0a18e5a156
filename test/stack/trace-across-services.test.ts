import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, waitForExit, waitForLine } from "@bas/embedded-infra";
import { createTestInfra, eventually, type TestInfra } from "@bas/testing";
import { type ScriptedLlm, startScriptedLlm, toolCallReply } from "../support/scripted-llm";

const ROOT = resolve(__dirname, "../..");

interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
}

/** Spans out of OTLP/HTTP JSON export requests. */
function spansOf(body: string): ExportedSpan[] {
  const value = (v: any) => v?.stringValue ?? v?.intValue ?? v?.boolValue ?? v?.doubleValue;
  const attributes = (list: any[] = []) => Object.fromEntries(list.map((a) => [a.key, value(a.value)]));
  const out: ExportedSpan[] = [];
  for (const rs of JSON.parse(body).resourceSpans ?? []) {
    const service = String(attributes(rs.resource?.attributes)["service.name"]);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          service,
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId || undefined,
          name: s.name,
          attributes: attributes(s.attributes),
        });
      }
    }
  }
  return out;
}

let infra: TestInfra;
let llm: ScriptedLlm;
let collector: Server;
let stack: ChildProcess | undefined;
let dataDir: string;
const spans: ExportedSpan[] = [];

beforeAll(async () => {
  infra = await createTestInfra();
  llm = await startScriptedLlm();
  dataDir = mkdtempSync(join(tmpdir(), "bas-trace-"));
  // A stand-in OTLP/HTTP collector: it only keeps the spans it is sent.
  collector = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      if (req.url === "/v1/traces") spans.push(...spansOf(body));
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
});
afterAll(async () => {
  if (stack && stack.exitCode === null) {
    stack.kill("SIGTERM");
    await waitForExit(stack, 60_000);
  }
  collector.close();
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
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as { port: number }).port}`,
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
    async () => spans.find((s) => s.name === "runner.task" && s.attributes["bas.session_id"] === id),
    (s) => s !== undefined && spans.some((d) => d.traceId === s.traceId && d.name === "agent.decide"),
  );
  const trace = spans.filter((s) => s.traceId === task!.traceId);
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
