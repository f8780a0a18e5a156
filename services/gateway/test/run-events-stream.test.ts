import { eventually } from "@bas/testing";
import { type Stack, startStack } from "./harness";
import { dispatchedTaskId, type RunnerReports, runnerReports } from "./runner-driver";

/**
 * A run's events, and a v3 session's messages, pushed as Server-Sent Events: as they happen, in order, resumable,
 * ending with the run (the session).
 */
let stack: Stack;
let runner: RunnerReports;

beforeAll(async () => {
  stack = await startStack({ sessionsEnv: { MAX_ACTIVE_SESSIONS_PER_PROJECT: "30" } });
  runner = runnerReports(stack);
});
afterAll(async () => {
  runner.close();
  await stack.close();
});

interface SseEvent {
  id: number;
  rawId: string;
  event: string;
  data: any;
}

/** Opens a run's event stream and collects its events as they arrive; `done` settles when the server ends it. */
const openStream = (runId: string, headers: Record<string, string> = {}) =>
  openPath(`/api/v4/runs/${runId}/events`, headers);

async function openPath(path: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(`${stack.baseUrl}${path}`, {
    headers: { Accept: "text/event-stream", "X-Service-API-Key": stack.bootstrapKey, ...headers },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const events: SseEvent[] = [];
  const done = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    const reader = res.body!.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      buffer += decoder.decode(chunk.value, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = Object.fromEntries(
          block
            .split("\n")
            .filter((line) => !line.startsWith(":") && line.includes(": "))
            .map((line) => [line.slice(0, line.indexOf(": ")), line.slice(line.indexOf(": ") + 2)]),
        );
        if (fields.event) {
          events.push({ id: Number(fields.id), rawId: fields.id, event: fields.event, data: JSON.parse(fields.data) });
        }
      }
    }
  })().catch((err) => {
    if (!controller.signal.aborted) throw err;
  });
  return { events, done, close: () => controller.abort() };
}

async function pagedEvents(runId: string) {
  const all: { id: number; type: string }[] = [];
  for (let after = 0; ; ) {
    const page = (await stack.request("GET", `/api/v4/runs/${runId}/events?after=${after}&limit=2`)).body;
    all.push(...page.events);
    after = page.nextAfter;
    if (!page.hasMore) return all;
  }
}

const received = (stream: { events: SseEvent[] }, count: number) =>
  eventually(
    async () => stream.events.length,
    (n) => n >= count,
  );

async function startedRun() {
  const run = (await stack.request("POST", "/api/v4/runs", { body: { task: "watch me" } })).body;
  await runner.sandboxReady({ sessionId: run.sessionId, browserId: `b-${run.id}` });
  return { id: run.id as string, sessionId: run.sessionId as string };
}

const step = (run: { id: string; sessionId: string }, n: number) =>
  runner.stepRecorded({
    sessionId: run.sessionId,
    taskId: run.id,
    step: n,
    summary: `Step ${n}`,
    messages: [{ role: "ai", type: "browser_action", data: `{"n":${n}}`, summary: "acting", hidden: false }],
  });

test("each event arrives as it happens, in the order and with the ids of the pages; the stream ends with the run", async () => {
  const run = await startedRun();
  const stream = await openStream(run.id);
  await received(stream, 2); // run.created, run.dispatching
  await runner.taskStarted({ sessionId: run.sessionId, taskId: run.id, title: "Watching", attempt: 1 });
  await received(stream, 3);
  for (const n of [1, 2, 3]) {
    await step(run, n);
    // Pushed before anything else happens: the stream does not wait for the run to end.
    await received(stream, 3 + n);
    expect(stream.events.at(-1)).toMatchObject({ event: "run.step", data: { data: { step: n } } });
  }
  await runner.taskCompleted({ sessionId: run.sessionId, taskId: run.id, output: "seen", success: true });
  await stream.done;

  const pages = await pagedEvents(run.id);
  expect(stream.events.map((e) => [e.id, e.event])).toEqual(pages.map((e) => [e.id, e.type]));
  expect(stream.events.map((e) => e.data)).toEqual(pages);
  expect(stream.events.at(-1)).toMatchObject({ event: "run.completed", data: { data: { result: "seen" } } });
});

test("a reconnect with Last-Event-ID resumes after that event: no gap, no repeat", async () => {
  const run = await startedRun();
  await runner.taskStarted({ sessionId: run.sessionId, taskId: run.id, title: "Watching", attempt: 1 });
  const first = await openStream(run.id);
  await received(first, 3);
  first.close();
  await first.done;
  const lastSeen = first.events.at(-1)!.id;

  // Events the caller missed while it was away, then more once it is back.
  await step(run, 1);
  await step(run, 2);
  const second = await openStream(run.id, { "Last-Event-ID": String(lastSeen) });
  await received(second, 2);
  await step(run, 3);
  await runner.taskFailed({ sessionId: run.sessionId, taskId: run.id, error: "site down" });
  await second.done;

  const pages = await pagedEvents(run.id);
  expect([...first.events, ...second.events].map((e) => e.id)).toEqual(pages.map((e) => e.id));
  expect(second.events.at(-1)).toMatchObject({ event: "run.failed", data: { data: { error: "site down" } } });

  // An ended run's stream replays what is asked for and ends at once.
  const replay = await openStream(run.id, { "Last-Event-ID": String(pages[1].id) });
  await replay.done;
  expect(replay.events.map((e) => e.id)).toEqual(pages.slice(2).map((e) => e.id));
});

test("another project's run is a plain 404, not a stream", async () => {
  const run = await startedRun();
  const key = await stack.newProjectKey();
  const res = await fetch(`${stack.baseUrl}/api/v4/runs/${run.id}/events`, {
    headers: { Accept: "text/event-stream", "X-Service-API-Key": key },
  });
  expect(res.status).toBe(404);
  expect(await res.json()).toEqual({ detail: "Run not found" });
});

test("a v3 session's messages: pushed as they are recorded, the same as the pages, resumable, ending with the session", async () => {
  const session = (await stack.request("POST", "/api/v3/sessions", { body: { task: "stream my messages" } })).body;
  const taskId = await dispatchedTaskId(stack, session.id);
  const path = `/api/v3/sessions/${session.id}/messages`;
  const stream = await openPath(path);
  await received(stream, 1); // the task, as the human message
  await runner.sandboxReady({ sessionId: session.id, browserId: `b-${session.id}` });
  await runner.taskStarted({ sessionId: session.id, taskId, title: "Streaming", attempt: 1 });
  for (const n of [1, 2]) {
    await runner.stepRecorded({
      sessionId: session.id,
      taskId,
      step: n,
      summary: `Step ${n}`,
      messages: [{ role: "ai", type: "browser_action", data: `{"n":${n}}`, summary: `acting ${n}`, hidden: false }],
    });
    await received(stream, 1 + n);
  }
  await runner.taskCompleted({ sessionId: session.id, taskId, output: "streamed", success: true });
  await stream.done; // without keepAlive the session stops: the stream ends

  const paged = (await stack.request("GET", `${path}?limit=100`)).body.messages;
  expect(stream.events.map((e) => e.data)).toEqual(paged);
  expect(stream.events.map((e) => [e.rawId, e.event])).toEqual(
    paged.map((m: { id: string; type: string }) => [m.id, m.type]),
  );
  const resumed = await openPath(path, { "Last-Event-ID": stream.events[0].rawId });
  await resumed.done;
  expect(resumed.events.map((e) => e.rawId)).toEqual(paged.slice(1).map((m: { id: string }) => m.id));
});
