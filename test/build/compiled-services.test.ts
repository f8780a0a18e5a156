/**
 * The services as the images run them: `npm run build`'s bundles, `node --enable-source-maps dist/<name>/main.js`,
 * all five on the test's NATS and Postgres until the gateway's /healthz is green. Then what only a bundle can get
 * wrong: a browser launch (the sandbox script read beside the bundle, proxy-chain imported from outside it), an agent
 * task (the runner's in-page scripts, read beside the bundle), tracing of gRPC (required lazily, after OpenTelemetry
 * started); and the Dockerfile's HEALTHCHECK commands.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { freePort } from "@bas/embedded-infra";
import {
  createTestInfra,
  eventually,
  natsUrl,
  type ServiceProcess,
  spawnServiceProcess,
  type TestInfra,
} from "@bas/testing";
import WebSocket from "ws";
import { type BuildResult, buildServices } from "../../scripts/build";
import { type FixtureSites, startFixtureSites } from "../fixtures/sites";
import { effectiveInstructions, execForm, last, parseDockerfile } from "../support/dockerfile";
import { startOtlpCollector, type OtlpCollector } from "../support/otlp-collector";
import { promptText, type ScriptedLlm, startScriptedLlm, toolCallReply } from "../support/scripted-llm";
import { READY_MESSAGES, SERVICE_NAMES, type ServiceName, type StackEnvs, stackEnvs } from "../support/service-envs";

const ROOT = resolve(__dirname, "../..");
const run = promisify(execFile);

/** Laid out as the image's /app: dist/ here, node_modules found by walking up. */
let appDir: string;
let outDir: string;
let built: BuildResult;
let dataDir: string;
let infra: TestInfra;
let collector: OtlpCollector;
let llm: ScriptedLlm;
let sites: FixtureSites;
let stack: StackEnvs;
const processes: ServiceProcess[] = [];

/** A REST call with the stack's API key. */
const api = (method: string, path: string, body?: unknown) =>
  fetch(`${stack.baseUrl}${path}`, {
    method,
    headers: { "X-Service-API-Key": stack.apiKey, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** What the test adds to the stack's environment: its model, its site opened to the browsers, sessions' traces. */
const testEnv = (name: ServiceName): Record<string, string> => ({
  LLM_BASE_URL: llm.urlFor("compiled"),
  LLM_API_KEY: "test-key",
  ...(name === "browser-pool" ? { BROWSER_EGRESS_ALLOW: new URL(sites.url).host } : {}),
  ...(name === "sessions"
    ? {
        OTEL_SDK_DISABLED: "false",
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
        OTEL_BSP_SCHEDULE_DELAY: "100",
      }
    : {}),
});

beforeAll(async () => {
  // Inside the repository, as in the image (/app/dist beside /app/node_modules): the bundles' requires of npm
  // packages resolve by walking up to node_modules.
  mkdirSync(join(ROOT, "node_modules/.cache"), { recursive: true });
  appDir = mkdtempSync(join(ROOT, "node_modules/.cache/bas-build-"));
  outDir = join(appDir, "dist");
  dataDir = mkdtempSync(join(tmpdir(), "bas-compiled-"));
  [built, infra, collector, llm, sites] = await Promise.all([
    buildServices({ outDir }),
    createTestInfra(),
    startOtlpCollector(),
    startScriptedLlm(),
    startFixtureSites(),
  ]);
  stack = await stackEnvs({ natsUrl: natsUrl(), databaseUrl: infra.databaseUrl, namespace: infra.namespace, dataDir });
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill("SIGTERM")));
  await Promise.all([collector?.close(), llm?.close(), sites?.close()]);
  await infra?.close();
  rmSync(appDir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

test("the build copies the files the code reads beside its source", () => {
  expect(built.assets["browser-pool"]).toContain("sandbox-init.sh");
  expect(built.assets.runner).toEqual(
    expect.arrayContaining(["script-sandbox-init.sh", "observe-page-script.js", "css-selector-script.js"]),
  );
});

test("the five compiled services start and the gateway's /healthz is green", async () => {
  const started = await Promise.all(
    SERVICE_NAMES.map((name) =>
      spawnServiceProcess({
        entry: join(outDir, name, "main.js"),
        readyMessage: READY_MESSAGES[name],
        env: { ...stack.env[name], ...testEnv(name) },
      }),
    ),
  );
  processes.push(...started);
  const health = await eventually(
    () => fetch(`${stack.baseUrl}/healthz`).then(async (r) => ({ status: r.status, body: await r.text() })),
    (r) => r.status === 200,
    20_000,
  );
  expect(health.status).toBe(200);
});

test("a browser launches in its sandbox and answers CDP through the proxy", async () => {
  const created = await api("POST", "/api/v4/browsers", {});
  const browser = (await created.json()) as { id: string; cdpUrl: string };
  expect(created.status).toBeLessThan(300);
  const ws = new WebSocket(browser.cdpUrl);
  const reply = await new Promise<any>((resolve, reject) => {
    ws.once("open", () => ws.send(JSON.stringify({ id: 1, method: "Browser.getVersion" })));
    ws.once("message", (data) => resolve(JSON.parse(data.toString())));
    ws.once("error", reject);
  });
  ws.close();
  expect(reply.result.product).toMatch(/Chrome/);
  const stopped = await api("PATCH", `/api/v4/browsers/${browser.id}`, { action: "stop" });
  expect(stopped.status).toBeLessThan(300);
});

test("a task runs through the compiled runner: it opens a page, reads it and answers", async () => {
  llm.script("compiled", [
    toolCallReply("go_to_url", { url: `${sites.url}/shop/product/pixelon-8` }),
    (req) => toolCallReply("done", { success: true, text: `It costs ${/(\$[\d.,]+)/.exec(promptText(req))?.[1]}.` }),
  ]);
  const created = await api("POST", "/api/v3/sessions", { task: "What does the Pixelon 8 cost?", keepAlive: false });
  expect(created.status).toBe(200);
  const { id } = (await created.json()) as { id: string };
  const session = await eventually(
    async () => (await (await api("GET", `/api/v3/sessions/${id}`)).json()) as any,
    (s) => s.status === "stopped",
    30_000,
  );
  expect(session).toMatchObject({ output: "It costs $699.00.", isTaskSuccessful: true });
});

test("the Dockerfile's HEALTHCHECKs: 0 for the serving gateway and sessions (traced), 1 where nothing serves", async () => {
  const stages = parseDockerfile(join(ROOT, "Dockerfile"));
  const healthcheck = (target: string) => execForm(last(effectiveInstructions(stages, target), "HEALTHCHECK")!.args);
  const probe = (target: string, env: Record<string, string>) => {
    const [command, ...args] = healthcheck(target);
    return run(command === "node" ? process.execPath : command, args, {
      cwd: appDir,
      env: { ...env, PATH: process.env.PATH },
    });
  };
  const gatewayPort = new URL(stack.baseUrl).port;
  const sessionsPort = stack.grpc.sessions.split(":")[1];
  const nobody = String(await freePort());
  await expect(probe("gateway", { PORT: gatewayPort })).resolves.toBeDefined();
  await expect(probe("sessions", { GRPC_PORT: sessionsPort })).resolves.toBeDefined();
  await expect(probe("gateway", { PORT: nobody })).rejects.toMatchObject({ code: 1 });
  await expect(probe("sessions", { GRPC_PORT: nobody })).rejects.toMatchObject({ code: 1 });
  const span = await eventually(
    async () =>
      collector.spans().find((s) => s.service === "sessions" && s.name.endsWith("grpc.health.v1.Health/Check")),
    (s) => s !== undefined,
    10_000,
  );
  expect(span).toBeDefined();
});
