import { toolCallReply } from "../support/scripted-llm";
import { type AgentStack, startAgentStack } from "./support/agent-stack";

// Two browser-pool replicas of one browser each, which the gateway and the runner reach through one target, as they
// reach a headless Service's pods in Kubernetes.
let stack: AgentStack;
beforeAll(async () => {
  stack = await startAgentStack({ browserPoolReplicas: 2, browserPoolEnv: { MAX_BROWSERS_PER_NODE: "1" } });
});
afterAll(() => stack?.close());

const FULL = "This browser node is at capacity (1 browsers). Try again shortly.";
/** Which replica runs a browser: each serves its browsers' cdpUrl on its own CDP port. */
const replicaOf = (browser: { cdpUrl: string }) =>
  stack.browserPools.findIndex((pool) => new URL(browser.cdpUrl).port === String(pool.cdpPort));

async function create() {
  const created = await stack.request("POST", "/api/v4/browsers", {});
  expect([created.status, created.body.detail]).toEqual([201, undefined]);
  return created.body as { id: string; cdpUrl: string };
}
const stop = (id: string) => stack.request("PATCH", `/api/v4/browsers/${id}`, { action: "stop" });

test("a browser is created on whichever replica has room, and only with every replica full is the answer 429", async () => {
  const running = [await create(), await create()];
  expect(running.map(replicaOf).sort()).toEqual([0, 1]);
  const refused = await stack.request("POST", "/api/v4/browsers", {});
  expect([refused.status, refused.body]).toEqual([429, { detail: FULL }]);

  // Round after round one replica has room, whichever the next call would reach first.
  for (let round = 0; round < 6; round++) {
    const freed = running.splice(round % 2, 1)[0];
    expect((await stop(freed.id)).status).toBe(200);
    const again = await create();
    expect(replicaOf(again)).toBe(replicaOf(freed));
    running.push(again);
  }
  for (const browser of running) await stop(browser.id);
});

test("a session's browser, too, comes from the replica with room", async () => {
  const other = await create();
  stack.llm.script("gpt-4o", [toolCallReply("done", { success: true, text: "got a browser" })]);
  const created = await stack.request("POST", "/api/v3/sessions", { task: "Say you got a browser", model: "gpt-4o" });
  expect(created.status).toBe(200);
  const session = await stack.waitFor(created.body.id, (s) => s.status !== "created" && s.status !== "running");
  expect(session).toMatchObject({ output: "got a browser", isTaskSuccessful: true });
  expect(
    (await stack.request("POST", `/api/v3/sessions/${created.body.id}/stop`, { strategy: "session" })).status,
  ).toBe(200);
  await stop(other.id);
});
