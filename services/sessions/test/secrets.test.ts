import { Writable } from "node:stream";
import { status } from "@grpc/grpc-js";
import { sql } from "kysely";
import pino from "pino";
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

  const messages = await h.api.listMessages({ projectId: project, sessionId: s.id, limit: 100 });
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
