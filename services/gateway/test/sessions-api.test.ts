import { randomBytes } from "node:crypto";
import { createNatsBlobStore } from "@bas/blobs";
import { eventually } from "@bas/testing";
import { type Stack, startStack } from "./harness";
import { dispatchedTaskId, type RunnerReports, runnerReports } from "./runner-driver";

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

const SESSION_FIELDS = [
  "id",
  "status",
  "model",
  "thinkingLevel",
  "title",
  "output",
  "outputSchema",
  "stepCount",
  "lastStepSummary",
  "isTaskSuccessful",
  "liveUrl",
  "recordingUrls",
  "profileId",
  "workspaceId",
  "proxyCountryCode",
  "browserScreenWidth",
  "browserScreenHeight",
  "maxCostUsd",
  "totalInputTokens",
  "totalOutputTokens",
  "proxyUsedMb",
  "llmCostUsd",
  "proxyCostUsd",
  "browserCostUsd",
  "totalCostUsd",
  "screenshotUrl",
  "inboxEmail",
  "agentmailEmail",
  "integrationsUsed",
  "createdAt",
  "updatedAt",
];

describe("a session's life through REST", () => {
  test("create answers the whole SessionResponse with its defaults, and an immediate read finds it", async () => {
    const created = await stack.request("POST", "/api/v3/sessions", { body: { task: "Find the top story" } });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body)).toEqual(SESSION_FIELDS);
    expect(created.body).toMatchObject({
      status: "created",
      model: "svc-max",
      thinkingLevel: null,
      title: null,
      output: null,
      outputSchema: null,
      stepCount: 0,
      lastStepSummary: null,
      isTaskSuccessful: null,
      recordingUrls: [],
      profileId: null,
      workspaceId: null,
      proxyCountryCode: "us",
      browserScreenWidth: null,
      browserScreenHeight: null,
      maxCostUsd: null,
      totalInputTokens: 0,
      totalOutputTokens: 0,
      proxyUsedMb: "0",
      llmCostUsd: "0",
      proxyCostUsd: "0",
      browserCostUsd: "0",
      totalCostUsd: "0",
      screenshotUrl: null,
      inboxEmail: null,
      agentmailEmail: null,
      integrationsUsed: [],
    });
    expect(created.body.liveUrl).toEqual(expect.any(String));
    expect(new Date(created.body.createdAt).toISOString()).toBe(created.body.createdAt);
    const read = await stack.request("GET", `/api/v3/sessions/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  test("progress reported by the runner shows up: title, steps, signed screenshot and recording, output", async () => {
    const created = await stack.request("POST", "/api/v3/sessions", {
      body: { task: "Read the page title", keepAlive: false },
    });
    const id = created.body.id;
    const taskId = await dispatchedTaskId(stack, id);
    const blobs = await createNatsBlobStore({ js: stack.infra.js, namespace: stack.infra.namespace });
    const png = randomBytes(2048);
    const screenshotRef = await blobs.put(png, { contentType: "image/png", kind: "screenshot" });
    const recording = randomBytes(4096);
    const recordingRef = await blobs.put(recording, { contentType: "video/webm", kind: "recording" });

    await runner.sandboxReady({ sessionId: id, browserId: "b-1" });
    await runner.taskStarted({ sessionId: id, taskId, title: "Reading a title", attempt: 1 });
    expect((await stack.request("GET", `/api/v3/sessions/${id}`)).body).toMatchObject({
      status: "running",
      title: "Reading a title",
      isTaskSuccessful: null,
    });
    await runner.stepRecorded({
      sessionId: id,
      taskId,
      step: 1,
      summary: "Navigating to example.com",
      screenshotRef,
      messages: [
        {
          role: "ai",
          type: "browser_action",
          data: '{"goto":"https://example.com"}',
          summary: "Navigating",
          hidden: false,
        },
      ],
    });
    await runner.recordingSaved({ sessionId: id, recordingRef });

    const read = await eventually(
      () => stack.request("GET", `/api/v3/sessions/${id}`),
      (r) => r.body.recordingUrls?.length === 1,
    );
    expect(read.body).toMatchObject({ stepCount: 1, lastStepSummary: "Navigating to example.com" });
    const shot = await fetch(read.body.screenshotUrl);
    expect(shot.status).toBe(200);
    expect(shot.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await shot.arrayBuffer()).equals(png)).toBe(true);
    expect(read.body.recordingUrls).toHaveLength(1);
    const video = await fetch(read.body.recordingUrls[0]);
    expect(Buffer.from(await video.arrayBuffer()).equals(recording)).toBe(true);

    // Lists never carry presigned URLs.
    const listed = (await stack.request("GET", "/api/v3/sessions?page_size=100")).body.sessions.find(
      (s: { id: string }) => s.id === id,
    );
    expect(listed).toMatchObject({ id, stepCount: 1, screenshotUrl: null, recordingUrls: [] });
    expect(Object.keys(listed)).toEqual(SESSION_FIELDS);

    const messages = await stack.request("GET", `/api/v3/sessions/${id}/messages`);
    expect(messages.status).toBe(200);
    expect(messages.body.hasMore).toBe(false);
    expect(messages.body.messages.map((m: { type: string }) => m.type)).toEqual(["user_message", "browser_action"]);
    expect(messages.body.messages[0]).toMatchObject({
      sessionId: id,
      role: "human",
      data: "Read the page title",
      // The contract's MessageResponse.summary is a string, never null; the task message has none to tell.
      summary: "",
      screenshotUrl: null,
      hidden: false,
    });
    const step = messages.body.messages[1];
    expect(Object.keys(step)).toEqual([
      "id",
      "sessionId",
      "role",
      "data",
      "type",
      "summary",
      "screenshotUrl",
      "hidden",
      "createdAt",
    ]);
    expect(step).toMatchObject({ role: "ai", summary: "Navigating" });
    expect(Buffer.from(await (await fetch(step.screenshotUrl)).arrayBuffer()).equals(png)).toBe(true);

    await runner.taskCompleted({ sessionId: id, taskId, output: "Example Domain", success: true });
    // The runner's report reaches the gateway's cache through a change notice: a poll sees it, not necessarily the
    // first one after the report returns.
    const finished = await eventually(
      () => stack.request("GET", `/api/v3/sessions/${id}`),
      (read) => read.body.status !== "running",
    );
    expect(finished.body).toMatchObject({
      status: "stopped",
      output: "Example Domain",
      isTaskSuccessful: true,
    });
    // A stopped session takes no task: 409.
    const again = await stack.request("POST", "/api/v3/sessions", { body: { task: "more", sessionId: id } });
    expect(again.status).toBe(409);
    expect(again.body.detail).toEqual(expect.any(String));
  });

  test("a blob URL with a wrong signature is 403, an expired one 410, and neither leaks the blob", async () => {
    const { createBlobUrlSigner } = await import("@bas/blobs");
    const blobs = await createNatsBlobStore({ js: stack.infra.js, namespace: stack.infra.namespace });
    const ref = await blobs.put(Buffer.from("secret pixels"), { contentType: "image/png" });
    const signer = createBlobUrlSigner({ key: stack.blobSigningKey, baseUrl: stack.baseUrl });
    const good = new URL(signer.sign(ref));
    expect((await fetch(good)).status).toBe(200);

    const tampered = new URL(good);
    tampered.searchParams.set("sig", `${good.searchParams.get("sig")!.slice(0, -3)}AAA`);
    const forbidden = await fetch(tampered);
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toEqual({ detail: "Invalid or missing signature" });
    expect((await fetch(`${stack.baseUrl}/blobs/${ref}`)).status).toBe(403);

    const past = createBlobUrlSigner({
      key: stack.blobSigningKey,
      baseUrl: stack.baseUrl,
      now: () => Date.now() - 10 * 60 * 1000,
    });
    const expired = await fetch(past.sign(ref));
    expect(expired.status).toBe(410);
    expect((await expired.json()).detail).toMatch(/expired/);

    const otherKey = createBlobUrlSigner({ key: "k".repeat(40), baseUrl: stack.baseUrl });
    expect((await fetch(otherKey.sign(ref))).status).toBe(403);
    expect((await fetch(signer.sign("blob-does-not-exist.png"))).status).toBe(404);
  });

  test("stop with strategy task keeps a keep-alive session idle; strategy session (the default) stops it", async () => {
    const created = await stack.request("POST", "/api/v3/sessions", { body: { task: "loop", keepAlive: true } });
    const id = created.body.id;
    const taskId = await dispatchedTaskId(stack, id);
    await runner.sandboxReady({ sessionId: id, browserId: "b-2" });
    await runner.taskStarted({ sessionId: id, taskId, attempt: 1 });

    const stopTask = await stack.request("POST", `/api/v3/sessions/${id}/stop`, { body: { strategy: "task" } });
    expect(stopTask.status).toBe(200);
    expect(Object.keys(stopTask.body)).toEqual(SESSION_FIELDS);
    expect(stopTask.body.status).toBe("idle");

    const stopSession = await stack.request("POST", `/api/v3/sessions/${id}/stop`);
    expect(stopSession.status).toBe(200);
    expect(stopSession.body.status).toBe("stopped");
  });

  test("delete: 204, then 404 and gone from the list", async () => {
    const key = await stack.newProjectKey();
    const created = await stack.request("POST", "/api/v3/sessions", { key, body: { task: "to be deleted" } });
    const id = created.body.id;
    const deleted = await stack.request("DELETE", `/api/v3/sessions/${id}`, { key });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    expect(await stack.request("GET", `/api/v3/sessions/${id}`, { key })).toMatchObject({
      status: 404,
      body: { detail: "Session not found" },
    });
    expect((await stack.request("DELETE", `/api/v3/sessions/${id}`, { key })).status).toBe(404);
    expect((await stack.request("GET", "/api/v3/sessions", { key })).body).toMatchObject({ sessions: [], total: 0 });
  });
});

describe("pagination through REST", () => {
  let key: string;
  const ids: string[] = [];

  beforeAll(async () => {
    key = await stack.newProjectKey();
    for (let i = 0; i < 23; i++) {
      const reply = await stack.request("POST", "/api/v3/sessions", {
        key,
        body: { task: `task ${i}`, keepAlive: true },
      });
      expect(reply.status).toBe(200);
      ids.push(reply.body.id);
    }
  });

  test("pages of 10: 10, 10, the last partial page of 3, then an empty page past the end; newest first", async () => {
    const newestFirst = [...ids].reverse();
    const pages = [];
    for (const page of [1, 2, 3, 4]) {
      const reply = await stack.request("GET", `/api/v3/sessions?page=${page}&page_size=10`, { key });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ total: 23, page, pageSize: 10 });
      pages.push(reply.body.sessions.map((s: { id: string }) => s.id));
    }
    expect(pages.map((p) => p.length)).toEqual([10, 10, 3, 0]);
    expect(pages.flat()).toEqual(newestFirst);
    const far = await stack.request("GET", "/api/v3/sessions?page=1000&page_size=100", { key });
    expect(far.body).toEqual({ sessions: [], total: 23, page: 1000, pageSize: 100 });
    const all = await stack.request("GET", "/api/v3/sessions?page_size=100", { key });
    expect(all.body.sessions.map((s: { id: string }) => s.id)).toEqual(newestFirst);
    expect((await stack.request("GET", "/api/v3/sessions", { key })).body.sessions).toHaveLength(20);
  });

  test("too many concurrently active sessions is 429 with a clear detail", async () => {
    // 23 active already; the limit is 30.
    const replies = [];
    for (let i = 0; i < 8; i++)
      replies.push(await stack.request("POST", "/api/v3/sessions", { key, body: { keepAlive: true } }));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 429]);
    expect(replies[7].body.detail).toMatch(/^Too many concurrent active sessions/);
  });
});

describe("messages paging through REST", () => {
  test("limit, after and before page through the conversation in order; an unknown cursor is 422", async () => {
    const created = await stack.request("POST", "/api/v3/sessions", { body: { task: "many steps", keepAlive: true } });
    const id = created.body.id;
    const taskId = await dispatchedTaskId(stack, id);
    await runner.sandboxReady({ sessionId: id, browserId: "b-3" });
    await runner.taskStarted({ sessionId: id, taskId, attempt: 1 });
    for (let step = 1; step <= 4; step++) {
      await runner.stepRecorded({
        sessionId: id,
        taskId,
        step,
        summary: `step ${step}`,
        messages: [{ role: "ai", type: "planning", data: `plan ${step}`, hidden: false }],
      });
    }
    const all = await stack.request("GET", `/api/v3/sessions/${id}/messages`);
    expect(all.body.messages.map((m: { data: string }) => m.data)).toEqual([
      "many steps",
      "plan 1",
      "plan 2",
      "plan 3",
      "plan 4",
    ]);
    // Without a cursor, the newest (the official clients take the last of `limit=1` as where the conversation is).
    const latest = await stack.request("GET", `/api/v3/sessions/${id}/messages?limit=2`);
    expect(latest.body.messages.map((m: { data: string }) => m.data)).toEqual(["plan 3", "plan 4"]);
    expect(latest.body.hasMore).toBe(true);
    const last = await stack.request("GET", `/api/v3/sessions/${id}/messages?limit=1`);
    expect(last.body.messages.map((m: { data: string }) => m.data)).toEqual(["plan 4"]);
    const older = await stack.request(
      "GET",
      `/api/v3/sessions/${id}/messages?limit=2&before=${latest.body.messages[0].id}`,
    );
    expect(older.body.messages.map((m: { data: string }) => m.data)).toEqual(["plan 1", "plan 2"]);
    expect(older.body.hasMore).toBe(true);
    const next = await stack.request(
      "GET",
      `/api/v3/sessions/${id}/messages?limit=2&after=${older.body.messages[0].id}`,
    );
    expect(next.body.messages.map((m: { data: string }) => m.data)).toEqual(["plan 2", "plan 3"]);
    expect(next.body.hasMore).toBe(true);
    const plan3 = all.body.messages[3].id;
    const before = await stack.request("GET", `/api/v3/sessions/${id}/messages?limit=2&before=${plan3}`);
    expect(before.body.messages.map((m: { data: string }) => m.data)).toEqual(["plan 1", "plan 2"]);
    const unknown = await stack.request(
      "GET",
      `/api/v3/sessions/${id}/messages?after=6f1c1b52-3c4e-4a53-9a55-2b1f4c6c9d10`,
    );
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]).toMatchObject({ loc: ["query", "after"], type: "value_error" });
  });
});
