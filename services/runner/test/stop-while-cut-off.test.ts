import { eventually, natsUrl, type SeverableLink, startSeverableLink } from "@bas/testing";
import { indexOf, toolCallReply } from "../../../test/support/scripted-llm";
import { PROJECT, type RunnerStack, startRunnerStack } from "./support/runner-stack";

// One runner, which reaches NATS through a link the test cuts; sessions and browser-pool reach it directly.
let stack: RunnerStack;
let link: SeverableLink;
beforeAll(async () => {
  stack = await startRunnerStack({ noRunner: true });
  const nats = new URL(natsUrl());
  link = await startSeverableLink({ host: nats.hostname, port: Number(nats.port) });
  // A work-queue message is not handed out again while the link is cut.
  stack.runner = await stack.startRunner({ NATS_URL: `nats://${link.address}`, TASK_ACK_WAIT_MS: "30000" });
});
afterAll(async () => {
  await stack?.close();
  await link?.close();
});

test("a task stopped while its runner was cut off from NATS takes no further action once the link is back", async () => {
  const { llm, sites } = stack;
  let asked!: () => void;
  const thinking = new Promise<void>((resolve) => {
    asked = resolve;
  });
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  llm.script("gpt-4o", [
    toolCallReply("go_to_url", { url: `${sites.url}/counter/after-stop/` }),
    // The model decides to press while the stop happens; its answer comes only when the test lets it.
    async (req) => {
      asked();
      await released;
      return toolCallReply("click", { index: indexOf(req, /<button type="submit">Press/) });
    },
    toolCallReply("done", { success: true, text: "pressed" }),
  ]);
  const created = await stack.create({ task: "Press the button.", model: "gpt-4o", keepAlive: true });
  try {
    await thinking;
    link.cut();
    await stack.api.stopSession({ projectId: PROJECT, sessionId: created.id, strategy: "task" });
    await stack.waitFor(created.id, (s) => s.status === "idle");
    link.restore();
    // The runner hears the stop once it is back, and abandons the model call in flight: without it, the runner would
    // wait for the answer and press.
    await eventually(
      async () => stack.runner.status().activeTasks,
      (active) => active === 0,
    );
  } finally {
    release();
  }
  expect(sites.presses("after-stop")).toBe(0);
  expect(llm.requests("gpt-4o")).toHaveLength(2);
  expect((await stack.waitFor(created.id, () => true)).status).toBe("idle");
}, 60_000);
