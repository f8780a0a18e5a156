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
