import { UPLOAD_TEXTS } from "../fixtures/sites";
import { indexOf, lastInputText, offeredTools, promptText, toolCallReply } from "../support/scripted-llm";
import { type AgentStack, startAgentStack } from "./support/agent-stack";

/** Workspaces as a caller and the agent meet them: presigned uploads in, file tools in the task, results out. */
let stack: AgentStack;
beforeAll(async () => {
  stack = await startAgentStack();
});
afterAll(() => stack?.close());

const ORDERS = "sku,qty,price\nA-1,3,2.50\nB-2,5,1.20\nC-3,1,9.90\n";

/** The total the orders CSV adds up to, from the text of a file as the model was shown it. */
function totalOf(csv: string): string {
  const rows = csv.split("\n").filter((line) => /^[A-Z]-\d,/.test(line));
  return rows.reduce((sum, line) => sum + Number(line.split(",")[1]) * Number(line.split(",")[2]), 0).toFixed(2);
}

async function uploadThroughPresignedUrl(workspaceId: string, name: string, content: string, contentType: string) {
  const presigned = await stack.request("POST", `/api/v3/workspaces/${workspaceId}/files/upload?prefix=in/`, {
    files: [{ name, contentType, size: Buffer.byteLength(content) }],
  });
  expect(presigned.status).toBe(200);
  const put = await fetch(presigned.body.files[0].uploadUrl, {
    method: "PUT",
    body: content,
    headers: { "Content-Type": contentType },
  });
  expect(put.status).toBe(200);
  return presigned.body.files[0].path as string;
}

async function filesOf(workspaceId: string, version = "v3") {
  const reply = await stack.request("GET", `/api/${version}/workspaces/${workspaceId}/files?includeUrls=true`);
  expect(reply.status).toBe(200);
  return reply.body.files as { path: string; size: number; url: string }[];
}

test("the agent reads an uploaded CSV and writes its result file, which the caller lists and downloads; paths stay inside", async () => {
  const workspace = await stack.request("POST", "/api/v3/workspaces", { name: "orders" });
  const csvPath = await uploadThroughPresignedUrl(workspace.body.id, "orders.csv", ORDERS, "text/csv");
  expect(csvPath).toBe("in/orders.csv");

  let offered: string[] = [];
  stack.llm.script("gpt-4o", [
    (req) => {
      offered = offeredTools(req);
      return toolCallReply("list_files", {});
    },
    () => toolCallReply("read_file", { path: "in/orders.csv" }),
    () => toolCallReply("write_file", { path: "../outside.txt", content: "escape" }),
    (req) => toolCallReply("write_file", { path: "out/total.txt", content: `total=${totalOf(promptText(req))}\n` }),
    () => toolCallReply("done", { success: true, text: "Wrote out/total.txt" }),
  ]);
  const created = await stack.request("POST", "/api/v3/sessions", {
    task: "Add up the orders in in/orders.csv and write the total to out/total.txt.",
    model: "gpt-4o",
    workspaceId: workspace.body.id,
  });
  expect(created.status).toBe(200);
  const session = await stack.waitFor(created.body.id, (s) => s.status === "stopped");
  expect(session).toMatchObject({ isTaskSuccessful: true, output: "Wrote out/total.txt" });
  expect(offered).toEqual(expect.arrayContaining(["list_files", "read_file", "write_file", "upload_file"]));

  // What the model was shown: the listing, the file, and why the path outside was refused.
  const requests = stack.llm.requests("gpt-4o").slice(-4);
  expect(promptText(requests[0])).toContain(`in/orders.csv (${ORDERS.length} bytes)`);
  expect(promptText(requests[1])).toContain("A-1,3,2.50");
  expect(promptText(requests[2])).toContain('path must not contain ".."');

  const files = await filesOf(workspace.body.id);
  expect(files.map((f) => f.path)).toEqual(["in/orders.csv", "out/total.txt"]);
  const result = files.find((f) => f.path === "out/total.txt")!;
  expect(await (await fetch(result.url)).text()).toBe("total=23.40\n");
});

test("a file written in one session is there for the next, which puts it into a page's file input", async () => {
  const workspace = await stack.request("POST", "/api/v3/workspaces", {});
  const id = workspace.body.id;
  stack.llm.script("gpt-4o", [
    () => toolCallReply("write_file", { path: "notes/summary.txt", content: "first line\nsecond line\n" }),
    () => toolCallReply("done", { success: true, text: "saved" }),
  ]);
  const first = await stack.request("POST", "/api/v3/sessions", {
    task: "Save a summary.",
    model: "gpt-4o",
    workspaceId: id,
  });
  await stack.waitFor(first.body.id, (s) => s.status === "stopped");

  stack.llm.script("gpt-4o", [
    () => toolCallReply("go_to_url", { url: `${stack.sites.url}/upload/` }),
    (req) => toolCallReply("upload_file", { index: indexOf(req, /<input type=file/), path: "notes/summary.txt" }),
    (req) => {
      const shown = new RegExp(`${UPLOAD_TEXTS.received} [^\\n]*`).exec(lastInputText(req))?.[0] ?? "nothing";
      return toolCallReply("done", { success: true, text: shown });
    },
  ]);
  const second = await stack.request("POST", "/api/v3/sessions", {
    task: "Upload notes/summary.txt on the upload page.",
    model: "gpt-4o",
    workspaceId: id,
  });
  const session = await stack.waitFor(second.body.id, (s) => s.status === "stopped");
  expect(session.output).toBe(`${UPLOAD_TEXTS.received} summary.txt (23 bytes, text/plain): first line`);
});

test("a v4 run without a workspace named works in the project's default one, which the caller reads", async () => {
  stack.llm.script("gpt-4o", [
    () => toolCallReply("write_file", { path: "report.md", content: "# Report\n" }),
    () => toolCallReply("done", { success: true, text: "done" }),
  ]);
  const created = await stack.request("POST", "/api/v4/runs", { task: "Write a report.", model: "gpt-4o" });
  expect(created.status).toBe(200);
  const workspaceId = created.body.workspaceId;
  const deadline = Date.now() + 30_000;
  let status = "";
  while (Date.now() < deadline && !["completed", "failed", "cancelled"].includes(status)) {
    status = (await stack.request("GET", `/api/v4/runs/${created.body.id}/status`)).body.status;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  expect(status).toBe("completed");
  expect((await stack.request("GET", `/api/v4/workspaces/${workspaceId}`)).body).toMatchObject({
    id: workspaceId,
    name: "default",
  });
  const files = await filesOf(workspaceId, "v4");
  expect(files.map((f) => f.path)).toContain("report.md");
  expect(await (await fetch(files.find((f) => f.path === "report.md")!.url)).text()).toBe("# Report\n");
});

/** A file put into a workspace through the v4 upload API: the upload's id and its path. */
async function uploadV4(workspaceId: string, name: string, content: string, contentType = "text/csv") {
  const presigned = await stack.request("POST", `/api/v4/workspaces/${workspaceId}/files/upload`, {
    files: [{ name, contentType, size: Buffer.byteLength(content) }],
  });
  expect(presigned.status).toBe(200);
  const { id, path, uploadUrl } = presigned.body.files[0];
  const put = await fetch(uploadUrl, { method: "PUT", body: content, headers: { "Content-Type": contentType } });
  expect(put.status).toBe(200);
  return { id: id as string, path: path as string };
}

async function runToEnd(runId: string): Promise<any> {
  const deadline = Date.now() + 30_000;
  let run = (await stack.request("GET", `/api/v4/runs/${runId}`)).body;
  while (Date.now() < deadline && !["completed", "failed", "cancelled"].includes(run.status)) {
    await new Promise((resolve) => setTimeout(resolve, 150));
    run = (await stack.request("GET", `/api/v4/runs/${runId}`)).body;
  }
  return run;
}

test("a v4 run is pointed to uploaded files by their upload ids: the agent is told their paths and reads them", async () => {
  const workspace = (await stack.request("POST", "/api/v4/workspaces", { name: "attached" })).body;
  const orders = await uploadV4(workspace.id, "orders.csv", ORDERS);
  expect(orders.path).toBe("uploads/orders.csv");

  // What the agent's first prompt says of attached files.
  let told = "";
  const noting = (reply: ReturnType<typeof toolCallReply>) => (req: Parameters<typeof promptText>[0]) => {
    told = /attached these files[^\n]*/.exec(promptText(req))?.[0] ?? "nothing";
    return reply;
  };
  stack.llm.script("gpt-4o", [
    noting(toolCallReply("read_file", { path: orders.path })),
    (req) => toolCallReply("done", { success: true, text: `total=${totalOf(promptText(req))}` }),
  ]);
  const created = await stack.request("POST", "/api/v4/runs", {
    task: "Add up the attached orders.",
    model: "gpt-4o",
    workspaceId: workspace.id,
    attachedFileIds: [orders.id],
  });
  expect(created.status).toBe(200);
  const run = await runToEnd(created.body.id);
  expect(run).toMatchObject({ status: "completed", result: "total=23.40", attachedFileIds: [orders.id] });
  expect(told).toBe("attached these files of the workspace to this task: uploads/orders.csv");

  // A follow-up run attaches from its conversation's workspace, without naming it.
  stack.llm.script("gpt-4o", [noting(toolCallReply("done", { success: true, text: "again" }))]);
  const followUp = await stack.request("POST", "/api/v4/runs", {
    task: "Look at it again.",
    model: "gpt-4o",
    sessionId: run.sessionId,
    attachedFileIds: [orders.id],
  });
  expect(followUp.status).toBe(200);
  expect(await runToEnd(followUp.body.id)).toMatchObject({ status: "completed", attachedFileIds: [orders.id] });
  expect(told).toBe("attached these files of the workspace to this task: uploads/orders.csv");

  // So does a message to the conversation's queue, whose run starts at once (the conversation is idle).
  told = "";
  stack.llm.script("gpt-4o", [noting(toolCallReply("done", { success: true, text: "queued" }))]);
  const queued = await stack.request("POST", `/api/v4/sessions/${run.sessionId}/queue`, {
    text: "And once more.",
    attachedFileIds: [orders.id],
  });
  expect([queued.status, queued.body.attachedFileIds]).toEqual([200, [orders.id]]);
  const message = `/api/v4/sessions/${run.sessionId}/queue/${queued.body.id}`;
  let runId: string | null = queued.body.runId;
  for (const until = Date.now() + 10_000; !runId && Date.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    runId = (await stack.request("GET", message)).body.runId;
  }
  expect(await runToEnd(runId!)).toMatchObject({ status: "completed", result: "queued", attachedFileIds: [orders.id] });
  expect(told).toBe("attached these files of the workspace to this task: uploads/orders.csv");
  const queuedAttachments = (await stack.request("GET", `/api/v4/runs/${runId}/attachments`)).body.attachments;
  expect(queuedAttachments).toEqual([expect.objectContaining({ id: orders.id, name: "orders.csv" })]);
});

test("a run's attachments are its files in the order given, as they were when it was created; only its project sees them", async () => {
  const workspace = (await stack.request("POST", "/api/v4/workspaces", {})).body;
  const notes = await uploadV4(workspace.id, "notes.txt", "remember the milk\n", "text/plain");
  const orders = await uploadV4(workspace.id, "orders.csv", ORDERS);
  stack.llm.script("gpt-4o", [() => toolCallReply("done", { success: true, text: "seen" })]);
  const created = await stack.request("POST", "/api/v4/runs", {
    task: "Look at the files.",
    model: "gpt-4o",
    workspaceId: workspace.id,
    attachedFileIds: [notes.id, orders.id],
  });
  expect(created.status).toBe(200);
  const attachments = `/api/v4/runs/${created.body.id}/attachments`;
  const shown = {
    attachments: [
      { id: notes.id, name: "notes.txt", contentType: "text/plain", sizeBytes: 18, status: "uploaded" },
      { id: orders.id, name: "orders.csv", contentType: "text/csv", sizeBytes: ORDERS.length, status: "uploaded" },
    ],
  };
  expect(await stack.request("GET", attachments)).toMatchObject({ status: 200, body: shown });
  await runToEnd(created.body.id);

  // A later upload to the same path is another file: the run still shows the one it was given.
  await uploadV4(workspace.id, "orders.csv", "sku,qty,price\n");
  expect((await stack.request("GET", attachments)).body).toEqual(shown);

  stack.llm.script("gpt-4o", [() => toolCallReply("done", { success: true, text: "none" })]);
  const bare = await stack.request("POST", "/api/v4/runs", { task: "No files.", model: "gpt-4o" });
  expect((await stack.request("GET", `/api/v4/runs/${bare.body.id}/attachments`)).body).toEqual({ attachments: [] });
  await runToEnd(bare.body.id);

  const stranger = await stack.newProjectKey();
  const theirs = await stack.request("GET", attachments, undefined, stranger);
  expect([theirs.status, theirs.body]).toEqual([404, expect.objectContaining({ detail: expect.any(String) })]);
});

test("attached ids that name no file of the run's workspace are listed as missing; the run goes on with the rest", async () => {
  const workspace = (await stack.request("POST", "/api/v4/workspaces", {})).body;
  const other = (await stack.request("POST", "/api/v4/workspaces", {})).body;
  const elsewhere = await uploadV4(other.id, "a.csv", "x\n");
  const replaced = await uploadV4(workspace.id, "b.csv", "old\n");
  const current = await uploadV4(workspace.id, "b.csv", "new\n");
  // Presigned but never uploaded: no file yet.
  const pending = await stack.request("POST", `/api/v4/workspaces/${workspace.id}/files/upload`, {
    files: [{ name: "c.csv", contentType: "text/csv", size: 3 }],
  });
  const missing = [elsewhere.id, replaced.id, pending.body.files[0].id];
  let told = "";
  stack.llm.script("gpt-4o", [
    (req) => {
      told = /attached these files[^\n]*/.exec(promptText(req))?.[0] ?? "nothing";
      return toolCallReply("done", { success: true, text: "read" });
    },
  ]);
  const reply = await stack.request("POST", "/api/v4/runs", {
    task: "Read the attached file.",
    model: "gpt-4o",
    workspaceId: workspace.id,
    attachedFileIds: [missing[0], current.id, missing[1], missing[2]],
  });
  expect([reply.status, reply.body.missingFileIds]).toEqual([200, missing]);
  expect(await runToEnd(reply.body.id)).toMatchObject({ status: "completed", attachedFileIds: [current.id] });
  expect(told).toBe("attached these files of the workspace to this task: uploads/b.csv");
  const { attachments } = (await stack.request("GET", `/api/v4/runs/${reply.body.id}/attachments`)).body;
  expect(attachments.map((a: { id: string }) => a.id)).toEqual([current.id]);

  // A queued message has no answer that could list them: it is refused (404) before it joins the queue.
  const queued = await stack.request("POST", `/api/v4/sessions/${reply.body.sessionId}/queue`, {
    text: "Read it.",
    attachedFileIds: [current.id, elsewhere.id],
  });
  expect([queued.status, queued.body.detail]).toEqual([404, expect.stringContaining(`workspace: ${elsewhere.id}.`)]);
  const queue = await stack.request("GET", `/api/v4/sessions/${reply.body.sessionId}/queue`);
  expect(queue.body.queue).toEqual([]);
});

test("a session without a workspace is not offered file tools", async () => {
  let offered: string[] = [];
  stack.llm.script("gpt-4o", [
    (req) => {
      offered = offeredTools(req);
      return toolCallReply("done", { success: true, text: "ok" });
    },
  ]);
  const created = await stack.request("POST", "/api/v3/sessions", { task: "Say ok.", model: "gpt-4o" });
  await stack.waitFor(created.body.id, (s) => s.status === "stopped");
  expect(offered).toContain("go_to_url");
  expect(offered).not.toContain("read_file");
});
