import { toolCallReply } from "../support/scripted-llm";
import { type AgentStack, startAgentStack } from "./support/agent-stack";

// One browser per project: each session needs the browser the one before it had.
let stack: AgentStack;
beforeAll(async () => {
  stack = await startAgentStack({ browserPoolEnv: { MAX_BROWSERS_PER_PROJECT: "1" } });
});
afterAll(() => stack?.close());

test("a session created right after another was stopped gets the browser that one freed, round after round", async () => {
  for (let round = 0; round < 4; round++) {
    stack.llm.script("gpt-4o", [toolCallReply("done", { success: true, text: `round ${round}` })]);
    const created = await stack.request("POST", "/api/v3/sessions", {
      task: "Say which round this is",
      model: "gpt-4o",
      keepAlive: true,
    });
    expect([round, created.status, created.body.detail]).toEqual([round, 200, undefined]);
    const idle = await stack.waitFor(created.body.id, (s) => s.status !== "created" && s.status !== "running");
    expect([round, idle.status, idle.output]).toEqual([round, "idle", `round ${round}`]);
    // Its browser is stopped after the session, by browser-pool, when it reads the session's end.
    const stopped = await stack.request("POST", `/api/v3/sessions/${created.body.id}/stop`, { strategy: "session" });
    expect(stopped.status).toBe(200);
  }
});
