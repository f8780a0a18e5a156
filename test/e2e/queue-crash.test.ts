import { promptText, toolCallReply } from "../support/scripted-llm";
import { type AgentStack, startAgentStack } from "./support/agent-stack";

/** The sessions service killed (kill -9) with messages queued and a run going: nothing lost, nothing run twice. */
let stack: AgentStack;
beforeAll(async () => {
  stack = await startAgentStack({ sessionsProcess: true });
});
afterAll(() => stack?.close());

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined && done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in time; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test("kill -9 of the sessions service while a run works and two messages wait: after its restart each runs exactly once", async () => {
  const { llm, sites } = stack;
  let letGo!: () => void;
  const held = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  llm.script("gpt-4o", [
    () => held.then(() => toolCallReply("go_to_url", { url: `${sites.url}/shop/` })),
    toolCallReply("done", { success: true, text: "first done" }),
    toolCallReply("done", { success: true, text: "m1 done" }),
    toolCallReply("done", { success: true, text: "m2 done" }),
  ]);
  const run = (await stack.request("POST", "/api/v4/runs", { task: "first", model: "gpt-4o" })).body;
  const queue = `/api/v4/sessions/${run.sessionId}/queue`;
  const send = (text: string, key: string) =>
    fetch(`${stack.baseUrl}${queue}`, {
      method: "POST",
      headers: { "X-Service-API-Key": stack.apiKey, "Content-Type": "application/json", "X-V4-Queue-Deduplicate": key },
      body: JSON.stringify({ text }),
    }).then(async (res) => ({ status: res.status, body: await res.json() }));
  const m1 = await send("m1", "key-1");
  const m2 = await send("m2", "key-2");
  expect([m1.body.status, m2.body.status]).toEqual(["pending", "pending"]);
  // The run is in its first model call, held there.
  await until(
    async () => llm.requests("gpt-4o").length,
    (n) => n === 1,
    "first model call",
  );

  await stack.sessions!.kill();
  letGo(); // the runner acts on the answer and reports into the outage; it waits and tries again
  await stack.sessions!.restart();

  // A caller that never got its answer sends again with the same key: the same message, not a third one.
  const retried = await until(
    () => send("m2", "key-2"),
    (r) => r.status === 200,
    "the retried send",
  );
  expect(retried.body.id).toBe(m2.body.id);

  const runs = await until(
    async () => (await stack.request("GET", `/api/v4/runs?sessionId=${run.sessionId}`)).body.runs,
    (list: Array<{ status: string; task: string; result: string }>) =>
      list.length === 3 && list.every((r) => r.status === "completed"),
    "three completed runs",
  );
  expect(runs.map((r) => [r.task, r.result])).toEqual([
    ["m2", "m2 done"],
    ["m1", "m1 done"],
    ["first", "first done"],
  ]);
  // The model was asked exactly once per step of each run: nothing lost, nothing repeated.
  const tasks = llm.requests("gpt-4o").map((r) => /<task>\n([\s\S]*?)\n<\/task>/.exec(promptText(r))?.[1]);
  expect(tasks).toEqual(["first", "first", "m1", "m2"]);
  expect((await stack.request("GET", queue)).body).toEqual({ queue: [], steeringCutoffs: [] });
});
