import { Writable } from "node:stream";
import { status } from "@grpc/grpc-js";
import { sql } from "kysely";
import pino from "pino";
import { runs, type sessions } from "@bas/proto";
import { connectClient } from "@bas/service-kit";
import { eventually } from "@bas/testing";
import { createRequest, failure, type Harness, newProject, startHarness } from "./harness";

let h: Harness;
const logLines: string[] = [];
beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  h = await startHarness({}, { logger: pino({ level: "trace" }, sink) });
});
afterAll(() => h.close());

const SECRET = "hunter2-Zq8v!unique-value";

/** Every message of a stream, as raw text. */
async function streamText(stream: string): Promise<string> {
  const info = await h.infra.jsm.streams.info(stream);
  const parts: string[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const m = await h.infra.jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (m) parts.push(m.string());
  }
  return parts.join("\n");
}

test("sensitiveData values reach the runner only through GetTaskSecrets: never in events, the queue or the table", async () => {
  const project = newProject();
  const s = await h.api.createSession(
    createRequest(project, {
      task: "Log in as <secret>user</secret> with <secret>password</secret>",
      keepAlive: true,
      sensitiveData: { user: "alice@example.com", password: SECRET },
    }),
  );
  const work = await h.takeAssignment();
  expect(work.sensitiveDataKeys).toEqual(["password", "user"]);
  await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });

  const secrets = await h.reports.getTaskSecrets({ sessionId: s.id, taskId: work.taskId });
  expect(secrets.values).toEqual({ user: "alice@example.com", password: SECRET });
  const stale = await failure(h.reports.getTaskSecrets({ sessionId: s.id, taskId: "another-task" }));
  expect(stale.code).toBe(status.FAILED_PRECONDITION);

  const stored = await sql<{ ciphertext: Buffer }>`select ciphertext from session_secrets`.execute(h.infra.db);
  expect(stored.rows).toHaveLength(1);
  expect(stored.rows[0].ciphertext.toString("latin1")).not.toContain(SECRET);

  const messages = await h.api.listMessages({ projectId: project, sessionId: s.id, limit: 100, latest: false });
  const everything = [
    await streamText(h.infra.streams.events.stream),
    JSON.stringify(work),
    JSON.stringify(messages),
    JSON.stringify(await h.api.getSession({ projectId: project, sessionId: s.id })),
    ...logLines,
  ].join("\n");
  expect(logLines.length).toBeGreaterThan(0);
  expect(everything).toContain("<secret>password</secret>");
  expect(everything).not.toContain(SECRET);
  expect(everything).not.toContain("alice@example.com");

  // Once the task has ended its values are forgotten and no longer served.
  await h.reports.taskCompleted({ sessionId: s.id, taskId: work.taskId, output: "logged in", success: true });
  const ended = await failure(h.reports.getTaskSecrets({ sessionId: s.id, taskId: work.taskId }));
  expect(ended.code).toBe(status.FAILED_PRECONDITION);
  await eventually(
    () => sql<{ n: string }>`select count(*) as n from session_secrets`.execute(h.infra.db),
    (r) => Number(r.rows[0].n) === 0,
  );
});

test("a follow-up task's secrets belong to that task only", async () => {
  const project = newProject();
  const s = await h.api.createSession(createRequest(project, { keepAlive: true }));
  await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: s.id, browserId: "b" });
  await h.api.createSession(
    createRequest(project, { task: "type <secret>pin</secret>", sessionId: s.id, sensitiveData: { pin: "4711" } }),
  );
  const work = await h.takeAssignment();
  expect(work.sensitiveDataKeys).toEqual(["pin"]);
  expect((await h.reports.getTaskSecrets({ sessionId: s.id, taskId: work.taskId })).values).toEqual({ pin: "4711" });
});

const PROXY = { host: "proxy.example", port: 3128, ignoreCertErrors: true };
const PROXY_USER = "proxy-user-Kd83";
const PROXY_PASSWORD = "proxy-pass-Wq71!unique";

/** A run request with a custom proxy (with credentials unless `proxy` says otherwise). */
function runRequest(projectId: string, overrides: Partial<runs.CreateRunRequest> = {}) {
  return runs.CreateRunRequest.fromPartial({
    projectId,
    task: "Open the page through my proxy",
    model: "svc-max",
    browser: { customProxy: { ...PROXY, username: PROXY_USER, password: PROXY_PASSWORD } },
    ...overrides,
  });
}

test("a run's custom proxy: its place reaches the runner in the assignment, its credentials only through GetTaskSecrets", async () => {
  const project = newProject();
  const api = connectClient(runs.RunsClient, `127.0.0.1:${h.service.grpcPort}`);
  try {
    const run = await api.createRun(runRequest(project));
    // The assignment as it lies on the work queue, byte for byte, before a runner takes it.
    const queued = await eventually(
      () => streamText(h.infra.streams.work.stream),
      (text) => text.includes(run.id),
    );
    const work = await h.takeAssignment();
    expect(work.taskId).toBe(run.id);
    expect(work.browser?.customProxy).toEqual(PROXY);
    expect(work.sensitiveDataKeys).toEqual([]);

    const secrets = await h.reports.getTaskSecrets({ sessionId: run.sessionId, taskId: run.id });
    expect(secrets).toEqual({ values: {}, proxyCredentials: { username: PROXY_USER, password: PROXY_PASSWORD } });
    const rows = await sql<{ ciphertext: Buffer }>`select ciphertext from session_secrets
      where session_id = ${run.sessionId}`.execute(h.infra.db);
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0].ciphertext.toString("latin1")).not.toContain(PROXY_PASSWORD);

    await h.reports.sandboxReady({ sessionId: run.sessionId, browserId: "b" });
    const events = await streamText(h.infra.streams.events.stream);
    expect(events).toContain('"customProxy":{"host":"proxy.example","port":3128,"ignoreCertErrors":true}');
    const everything = [
      events,
      queued,
      JSON.stringify(await api.getRun({ projectId: project, runId: run.id })),
      JSON.stringify(await api.listRunEvents({ projectId: project, runId: run.id, after: 0, limit: 100 })),
      ...logLines,
    ].join("\n");
    expect(queued).toContain("proxy.example");
    for (const secret of [PROXY_PASSWORD, PROXY_USER]) expect(everything).not.toContain(secret);

    // The run ends: its credentials are forgotten and no longer served.
    await h.reports.taskCompleted({ sessionId: run.sessionId, taskId: run.id, output: "done", success: true });
    const ended = await failure(h.reports.getTaskSecrets({ sessionId: run.sessionId, taskId: run.id }));
    expect(ended.code).toBe(status.FAILED_PRECONDITION);
    await eventually(
      () =>
        sql<{ n: string }>`select count(*) as n from session_secrets
        where session_id = ${run.sessionId}`.execute(h.infra.db),
      (r) => Number(r.rows[0].n) === 0,
    );

    // A follow-up run without a proxy has none: it is not inherited.
    const next = await api.createRun(
      runRequest(project, { sessionId: run.sessionId, browser: { allowedDomains: [], record: false } }),
    );
    const followUp = await h.takeAssignment();
    expect(followUp.taskId).toBe(next.id);
    expect(followUp.browser?.customProxy).toBeUndefined();
    const nextSecrets = await h.reports.getTaskSecrets({ sessionId: run.sessionId, taskId: next.id });
    expect(nextSecrets.proxyCredentials).toBeUndefined();
  } finally {
    api.close();
  }
});

test("an invalid custom proxy is INVALID_ARGUMENT naming its field, without echoing the credentials", async () => {
  const api = connectClient(runs.RunsClient, `127.0.0.1:${h.service.grpcPort}`);
  const at = (field: string) => ["body", "browserSettings", "customProxy", field];
  const withProxy = (proxy: sessions.CustomProxy) =>
    api.createRun(runRequest(newProject(), { browser: { customProxy: proxy, allowedDomains: [], record: false } }));
  try {
    const port = await failure(withProxy({ ...PROXY, port: 0 }));
    expect(port).toMatchObject({ code: status.INVALID_ARGUMENT, field: at("port") });
    const host = await failure(withProxy({ ...PROXY, host: "" }));
    expect(host).toMatchObject({ code: status.INVALID_ARGUMENT, field: at("host") });
    const url = await failure(withProxy({ ...PROXY, host: "http://proxy.example/" }));
    expect(url).toMatchObject({ code: status.INVALID_ARGUMENT, field: at("host") });
    const user = await failure(withProxy({ ...PROXY, username: `a:${PROXY_PASSWORD}`, password: PROXY_PASSWORD }));
    expect(user).toMatchObject({ code: status.INVALID_ARGUMENT, field: at("username") });
    expect(user.details).not.toContain(PROXY_PASSWORD);
    const password = await failure(withProxy({ ...PROXY, username: PROXY_USER, password: "" }));
    expect(password).toMatchObject({ code: status.INVALID_ARGUMENT, field: at("password") });
  } finally {
    api.close();
  }
});
