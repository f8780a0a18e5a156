import { type AgentStack, startAgentStack } from "./support/agent-stack";

// A service started without LLM_BASE_URL; MODEL_ROUTES gives one model an endpoint of its own.
let stack: AgentStack;
beforeAll(async () => {
  stack = await startAgentStack({
    runnerEnv: {
      LLM_BASE_URL: "",
      MODEL_ROUTES: JSON.stringify({ "claude-sonnet-4": { baseUrl: "http://127.0.0.1:9/v1", provider: "anthropic" } }),
    },
  });
});
afterAll(() => stack?.close());

test("a task for a model no endpoint serves is refused at creation with a 400 that says what to configure", async () => {
  const refused = await stack.request("POST", "/api/v3/sessions", { task: "Open example.com", model: "svc-max" });
  expect(refused.status).toBe(400);
  expect(refused.body.detail).toMatch(/No model endpoint is configured for model 'svc-max'/);
  expect(refused.body.detail).toMatch(/LLM_BASE_URL/);
  // Nothing was created for it.
  expect((await stack.request("GET", "/api/v3/sessions")).body.sessions).toEqual([]);
});

test("what needs no model works without one: an idle session, a browser; a routed model takes tasks", async () => {
  expect((await stack.request("POST", "/api/v3/sessions", { keepAlive: true })).status).toBe(200);
  const browser = await stack.request("POST", "/api/v4/browsers", {});
  expect(browser.status).toBe(201);
  await stack.request("PATCH", `/api/v4/browsers/${browser.body.id}`, { action: "stop" });
  const routed = await stack.request("POST", "/api/v3/sessions", { task: "x", model: "claude-sonnet-4" });
  expect(routed.status).toBe(200);
  await stack.request("POST", `/api/v3/sessions/${routed.body.id}/stop`, { strategy: "session" });
});
