import { eventually } from "@bas/testing";
import { type AgentStack, startAgentStack } from "./support/agent-stack";

// One browser per project and one per node: the bootstrap project's browser fills both.
let stack: AgentStack;
let browserId: string;
beforeAll(async () => {
  stack = await startAgentStack({ browserPoolEnv: { MAX_BROWSERS_PER_PROJECT: "1", MAX_BROWSERS_PER_NODE: "1" } });
  const browser = await stack.request("POST", "/api/v4/browsers", {});
  expect(browser.status).toBe(201);
  browserId = browser.body.id;
});
afterAll(async () => {
  await stack?.request("PATCH", `/api/v4/browsers/${browserId}`, { action: "stop" });
  await stack?.close();
});

test("a create past the project's browser quota is a 429 that says so, and creates nothing", async () => {
  const refused = await stack.request("POST", "/api/v3/sessions", { task: "Find the top story" });
  expect(refused.status).toBe(429);
  expect(refused.body.detail).toBe(
    "Too many concurrent active browsers for this project (maximum 1): a new session would get none. Stop a browser or a session and try again.",
  );
  const listed = await stack.request("GET", "/api/v3/sessions");
  expect(listed.body.total).toBe(0);
});

test("a session that could not get a browser ends error, and its summary and its messages say why", async () => {
  // Another project has room in its quota, but the node has none left: the session is created and its runner
  // cannot get it a browser.
  const key = await stack.newProjectKey();
  const why = "The browser could not be started: This browser node is at capacity (1 browsers). Try again shortly.";
  // With a task (the task failed for that reason) and without one (an idle keep-alive session), side by side.
  await Promise.all(
    [
      { request: { task: "Find the top story" }, summary: `Task failed: ${why}` },
      { request: {}, summary: why },
    ].map(async ({ request, summary }) => {
      const created = await stack.request("POST", "/api/v3/sessions", request, key);
      expect(created.status).toBe(200);
      const ended = await eventually(
        async () => (await stack.request("GET", `/api/v3/sessions/${created.body.id}`, undefined, key)).body,
        (s) => s.status !== "created",
      );
      expect(ended).toMatchObject({ status: "error", lastStepSummary: summary });
      const { body } = await stack.request("GET", `/api/v3/sessions/${created.body.id}/messages`, undefined, key);
      expect(body.messages.at(-1)).toMatchObject({ role: "ai", type: "error", data: why });
    }),
  );
});
