import { setTimeout as sleep } from "node:timers/promises";
import { eventually } from "@bas/testing";
import { Client } from "pg";
import { type Stack, startStack } from "./harness";
import { type RunnerReports, runnerReports } from "./runner-driver";

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

const RUN_FIELDS = [
  "id",
  "task",
  "title",
  "model",
  "contextLimit",
  "status",
  "result",
  "error",
  "sessionId",
  "workspaceId",
  "attachedFileIds",
  "judgement",
  "totalInputTokens",
  "totalOutputTokens",
  "totalCostUsd",
  "createdAt",
  "updatedAt",
];

async function createRun(body: Record<string, unknown>) {
  const reply = await stack.request("POST", "/api/v4/runs", { body });
  expect(reply.status).toBe(200);
  return reply.body as { id: string; sessionId: string; status: string; workspaceId: string; eventsUrl: string };
}

const status = async (id: string) => (await stack.request("GET", `/api/v4/runs/${id}/status`)).body;

/**
 * The status once it shows `expected`, or what it shows after 5 s. Another client's change (here the runner's report)
 * reaches the gateway's cache by a change notice, a moment after the report has returned.
 */
const statusBecomes = (id: string, expected: string) =>
  eventually(
    () => status(id),
    (s) => s.status === expected,
    5_000,
  ).catch(() => status(id));

/** Every event of a run, read `limit` at a time through `after`/`nextAfter`. */
async function allEvents(id: string, limit: number) {
  const events: { id: number; type: string; data: Record<string, unknown> }[] = [];
  let after = 0;
  for (;;) {
    const page = await stack.request("GET", `/api/v4/runs/${id}/events?after=${after}&limit=${limit}`);
    expect(page.status).toBe(200);
    events.push(...page.body.events);
    after = page.body.nextAfter;
    if (!page.body.hasMore) return events;
  }
}

describe("a run's life", () => {
  test("queued → dispatching → running → completed, with its result, title and events, paged exactly once", async () => {
    const created = await createRun({ task: "Find the top story" });
    expect(Object.keys(created)).toEqual([
      "id",
      "status",
      "model",
      "sessionId",
      "workspaceId",
      "eventsUrl",
      "missingFileIds",
    ]);
    expect(created).toMatchObject({ status: "queued", model: "svc-max" });
    expect(created.eventsUrl).toBe(`${stack.baseUrl}/api/v4/runs/${created.id}/events`);
    expect(await status(created.id)).toEqual({ status: "queued" });

    const { id, sessionId } = created;
    await runner.sandboxReady({ sessionId, browserId: "b-1" });
    expect(await statusBecomes(id, "dispatching")).toEqual({ status: "dispatching" });
    await runner.taskStarted({ sessionId, taskId: id, title: "Reading the news", attempt: 1 });
    expect(await statusBecomes(id, "running")).toEqual({ status: "running" });
    for (const step of [1, 2, 3]) {
      await runner.stepRecorded({
        sessionId,
        taskId: id,
        step,
        summary: `Step ${step}`,
        messages: [{ role: "ai", type: "browser_action", data: `{"step":${step}}`, summary: "acting", hidden: false }],
      });
    }
    await runner.taskCompleted({ sessionId, taskId: id, output: "Cats win the election", success: true });
    expect(await statusBecomes(id, "completed")).toEqual({ status: "completed" });

    const run = await stack.request("GET", `/api/v4/runs/${id}`);
    expect(Object.keys(run.body)).toEqual(RUN_FIELDS);
    expect(run.body).toMatchObject({
      id,
      task: "Find the top story",
      title: "Reading the news",
      status: "completed",
      result: "Cats win the election",
      error: null,
      sessionId,
      workspaceId: created.workspaceId,
      totalInputTokens: 0,
      totalOutputTokens: 0,
      totalCostUsd: "0",
    });

    const events = await allEvents(id, 2);
    expect(events.map((e) => e.type)).toEqual([
      "run.created",
      "run.dispatching",
      "run.started",
      "run.step",
      "run.step",
      "run.step",
      "run.completed",
    ]);
    const ids = events.map((e) => e.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(events[3].data).toMatchObject({ step: 1, summary: "Step 1", messages: [{ type: "browser_action" }] });
    expect(events[6].data).toEqual({ result: "Cats win the election", success: true });
    // Past the end: an empty page that says where it is.
    const after = await stack.request("GET", `/api/v4/runs/${id}/events?after=${ids.at(-1)}`);
    expect(after.body).toEqual({ events: [], nextAfter: ids.at(-1), hasMore: false });
  });

  test("a failed run carries its error; a cancelled one ends at once and a second cancel changes nothing", async () => {
    const failing = await createRun({ task: "Fail" });
    await runner.sandboxReady({ sessionId: failing.sessionId, browserId: "b-2" });
    await runner.taskFailed({ sessionId: failing.sessionId, taskId: failing.id, error: "The site was down" });
    expect((await stack.request("GET", `/api/v4/runs/${failing.id}`)).body).toMatchObject({
      status: "failed",
      error: "The site was down",
      result: null,
    });

    const running = await createRun({ task: "Run for a long time" });
    await runner.sandboxReady({ sessionId: running.sessionId, browserId: "b-3" });
    await runner.taskStarted({ sessionId: running.sessionId, taskId: running.id, attempt: 1 });
    const cancelled = await stack.request("POST", `/api/v4/runs/${running.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: running.id, status: "cancelled" });
    const again = await stack.request("POST", `/api/v4/runs/${running.id}/cancel`);
    expect(again.body).toMatchObject({ status: "cancelled", updatedAt: cancelled.body.updatedAt });
    // The runner working it is told: its reports are refused from now on.
    await expect(
      runner.stepRecorded({ sessionId: running.sessionId, taskId: running.id, step: 1, summary: "late", messages: [] }),
    ).rejects.toThrow(/not the session's current task/);
    const events = await allEvents(running.id, 100);
    expect(events.at(-1)).toMatchObject({ type: "run.cancelled", data: { reason: "user" } });
  });
});

describe("conversations", () => {
  test("a follow-up run joins the session; the session shows its latest run; both lists page newest first", async () => {
    const key = await stack.newProjectKey();
    const post = (body: object) => stack.request("POST", "/api/v4/runs", { body, key });
    const first = (await post({ task: "Open the shop" })).body;
    await runner.sandboxReady({ sessionId: first.sessionId, browserId: "b-4" });
    // Busy: a second turn waits for the first to end.
    const busy = await post({ task: "Too early", sessionId: first.sessionId });
    expect(busy.status).toBe(409);
    expect(busy.body.detail).toMatch(/running/);
    await runner.taskCompleted({ sessionId: first.sessionId, taskId: first.id, output: "open", success: true });

    const second = (await post({ task: "Now buy the cat food", sessionId: first.sessionId })).body;
    expect(second).toMatchObject({ sessionId: first.sessionId, status: "dispatching" });
    expect(second.id).not.toBe(first.id);
    const session = await stack.request("GET", `/api/v4/sessions/${first.sessionId}`, { key });
    expect(session.body).toMatchObject({
      sessionId: first.sessionId,
      latestRunId: second.id,
      task: "Now buy the cat food",
      status: "dispatching",
      title: null,
    });

    const other = (await post({ task: "Another conversation" })).body;
    const runs = await stack.request("GET", "/api/v4/runs?limit=2", { key });
    expect(runs.body.runs.map((r: { id: string }) => r.id)).toEqual([other.id, second.id]);
    expect(runs.body.hasMore).toBe(true);
    const rest = await stack.request("GET", `/api/v4/runs?limit=2&cursor=${runs.body.nextCursor}`, { key });
    expect(rest.body).toMatchObject({ runs: [{ id: first.id }], hasMore: false, nextCursor: null });
    const ofSession = await stack.request("GET", `/api/v4/runs?sessionId=${first.sessionId}`, { key });
    expect(ofSession.body.runs.map((r: { id: string }) => r.id)).toEqual([second.id, first.id]);

    const sessions = await stack.request("GET", "/api/v4/sessions?limit=1", { key });
    expect(sessions.body).toMatchObject({ sessions: [{ sessionId: other.sessionId }], hasMore: true });
    const next = await stack.request("GET", `/api/v4/sessions?cursor=${sessions.body.nextCursor}`, { key });
    expect(next.body).toMatchObject({ sessions: [{ sessionId: first.sessionId }], hasMore: false });
  });
});

describe("what a caller may not do", () => {
  test("v3 and v4 never mix: each API's ids are 404 on the other's routes", async () => {
    const run = await createRun({ task: "v4 only" });
    const v3 = (await stack.request("POST", "/api/v3/sessions", { body: { task: "v3 only" } })).body;
    for (const path of [`/api/v3/sessions/${run.sessionId}`, `/api/v4/sessions/${v3.id}`]) {
      const reply = await stack.request("GET", path);
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({ detail: "Session not found" });
    }
    const v3Ids = (await stack.request("GET", "/api/v3/sessions?page_size=100")).body.sessions.map(
      (s: { id: string }) => s.id,
    );
    expect(v3Ids).not.toContain(run.sessionId);
    expect((await stack.request("POST", `/api/v3/sessions/${run.sessionId}/stop`, { body: {} })).status).toBe(404);
    const followUp = await stack.request("POST", "/api/v4/runs", { body: { task: "x", sessionId: v3.id } });
    expect(followUp.status).toBe(404);
  });

  test("another project's runs and sessions are 404; no key is 401; bad input is an exact 422", async () => {
    const run = await createRun({ task: "mine" });
    const key = await stack.newProjectKey();
    for (const path of [`/api/v4/runs/${run.id}`, `/api/v4/runs/${run.id}/status`, `/api/v4/runs/${run.id}/events`]) {
      expect(await stack.request("GET", path, { key })).toMatchObject({
        status: 404,
        body: { detail: "Run not found" },
      });
    }
    expect((await stack.request("POST", `/api/v4/runs/${run.id}/cancel`, { key })).status).toBe(404);
    expect(await status(run.id)).toEqual({ status: "queued" });
    expect((await stack.request("GET", `/api/v4/sessions/${run.sessionId}`, { key })).status).toBe(404);
    expect((await stack.request("GET", "/api/v4/runs", { key })).body).toEqual({
      runs: [],
      nextCursor: null,
      hasMore: false,
    });

    const none = await stack.request("GET", `/api/v4/runs/${run.id}`, { key: null });
    expect(none.status).toBe(401);

    const extra = await stack.request("POST", "/api/v4/runs", {
      body: { task: "x", modelParams: { frequencyPenalty: 2 } },
    });
    expect(extra.status).toBe(422);
    expect(extra.body).toEqual({
      detail: [
        {
          loc: ["body", "modelParams", "frequencyPenalty"],
          msg: "Extra inputs are not permitted",
          type: "extra_forbidden",
        },
      ],
    });
    // As in the official schema, a key the request does not have is refused, not dropped.
    const unknown = await stack.request("POST", "/api/v4/runs", { body: { task: "x", priority: "high" } });
    expect(unknown.body).toEqual({
      detail: [{ loc: ["body", "priority"], msg: "Extra inputs are not permitted", type: "extra_forbidden" }],
    });
    const empty = await stack.request("POST", "/api/v4/runs", { body: { task: "" } });
    expect(empty.status).toBe(422);
    expect(empty.body.detail[0]).toMatchObject({ loc: ["body", "task"], type: "string_too_short" });
    const badCursor = await stack.request("GET", "/api/v4/runs?cursor=nope");
    expect(badCursor.status).toBe(422);
    expect(badCursor.body.detail[0]).toMatchObject({ loc: ["query", "cursor"] });
    const notUuid = await stack.request("GET", "/api/v4/runs/not-a-uuid/status");
    expect(notUuid.status).toBe(422);
    expect(notUuid.body.detail[0]).toMatchObject({ loc: ["path", "id"], type: "uuid_parsing" });
  });

  test("a purge (Zero Data Retention) is refused with 403 and its reason, after the session is found; the session stays", async () => {
    const run = await createRun({ task: "kept" });
    const purge = await stack.request("POST", `/api/v4/sessions/${run.sessionId}/purge`);
    expect(purge).toMatchObject({
      status: 403,
      body: { detail: "Project is not ZDR-enabled: this service offers no purge of a session's data on demand" },
    });
    expect((await stack.request("GET", `/api/v4/sessions/${run.sessionId}`)).status).toBe(200);
    const key = await stack.newProjectKey();
    expect((await stack.request("POST", `/api/v4/sessions/${run.sessionId}/purge`, { key })).status).toBe(404);
    expect((await stack.request("POST", "/api/v4/sessions/not-a-uuid/purge")).status).toBe(422);
  });
});

test("a run created by one request is read at once by the next (no lag between create and read)", async () => {
  const run = await createRun({ task: "read your writes" });
  const read = await stack.request("GET", `/api/v4/runs/${run.id}`);
  expect(read.status).toBe(200);
  expect(read.body).toMatchObject({ id: run.id, status: "queued" });
});

test("a run created while the runs' read model lags behind is in the caller's next list all the same", async () => {
  const key = await stack.newProjectKey();
  const post = async (task: string) => (await stack.request("POST", "/api/v4/runs", { body: { task }, key })).body;
  const listed = async () =>
    (await stack.request("GET", "/api/v4/runs", { key })).body.runs.map((r: { id: string }) => r.id);
  const earlier = await post("Before the lag");
  expect(await listed()).toEqual([earlier.id]);
  // The runs' projection locks its checkpoint row before it applies a batch: holding that row holds the projection.
  const db = new Client({ connectionString: stack.infra.databaseUrl });
  await db.connect();
  try {
    await db.query("begin");
    await db.query("select 1 from projection_checkpoints where name = $1 for update", [
      `${stack.infra.namespace}/sessions-runs`,
    ]);
    // Its wait for the read model runs out (5 s): the create answers from the event store.
    const lagging = await post("While the projection is held");
    expect(lagging).toMatchObject({ status: "queued" });
    const list = listed();
    // Long enough for a list that did not wait to have answered without the run.
    await sleep(300);
    await db.query("commit");
    expect(await list).toEqual([lagging.id, earlier.id]);
  } finally {
    await db.end();
  }
});
