import pino from "pino";
import { LOGIN_ACCOUNT, LOGIN_TEXTS } from "../../../test/fixtures/sites";
import { indexOf, promptText, toolCallReply, toolCallsReply } from "../../../test/support/scripted-llm";
import { PROJECT, type RunnerStack, startRunnerStack } from "./support/runner-stack";

const logLines: string[] = [];
let stack: RunnerStack;
beforeAll(async () => {
  const logger = pino({ level: "trace" }, { write: (line: string) => void logLines.push(line) });
  stack = await startRunnerStack({ logger });
});
afterAll(() => stack?.close());

async function allEventsText(): Promise<string> {
  const { jsm, streams } = stack.infra;
  const info = await jsm.streams.info(streams.events.stream);
  const texts: string[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const m = await jsm.streams.getMessage(streams.events.stream, { seq }).catch(() => null);
    if (m) texts.push(m.string());
  }
  return texts.join("\n");
}

test("sensitiveData: typed from the sessions service's vault, absent from every LLM request, message, event and log line", async () => {
  const { llm, sites } = stack;
  llm.script("qwen-2.5-72b", [
    toolCallReply("go_to_url", { url: `${sites.url}/login/` }),
    (req) =>
      toolCallsReply([
        { name: "input_text", arguments: { index: indexOf(req, /<input type=email/), text: "<secret>user</secret>" } },
        {
          name: "input_text",
          arguments: { index: indexOf(req, /<input type=password/), text: "<secret>password</secret>" },
        },
        { name: "click", arguments: { index: indexOf(req, /<button>Sign in</) } },
      ]),
    (req) =>
      toolCallReply("done", {
        success: promptText(req).includes(LOGIN_TEXTS.greeting),
        // The model repeats what it saw; the user name appears on the page, so the runner must hide it again.
        text: promptText(req).includes(LOGIN_TEXTS.greeting)
          ? `Signed in as ${/signed in as (\S+)\./.exec(promptText(req))?.[1]}`
          : "failed",
      }),
  ]);
  const created = await stack.create({
    task: "Sign in with user <secret>user</secret> and password <secret>password</secret>.",
    model: "qwen-2.5-72b",
    sensitiveData: { user: LOGIN_ACCOUNT.username, password: LOGIN_ACCOUNT.password },
  });
  const session = await stack.waitFor(created.id, (s) => s.status === "stopped");
  expect(session).toMatchObject({ isTaskSuccessful: true, output: "Signed in as <secret>user</secret>" });

  const secrets = [LOGIN_ACCOUNT.username, LOGIN_ACCOUNT.password];
  const requests = llm.allRequests();
  expect(requests.length).toBe(3);
  // The page after login greets the user by e-mail; the model saw only the placeholder.
  expect(promptText(requests[2])).toContain("You are signed in as <secret>user</secret>.");
  const messages = JSON.stringify(await stack.messages(created.id));
  expect(messages).toContain("<secret>password</secret>");
  const events = await allEventsText();
  const logs = logLines.join("");
  expect(logs).toContain("task started");
  for (const secret of secrets) {
    for (const request of requests) expect(request.rawBody).not.toContain(secret);
    expect(messages).not.toContain(secret);
    expect(events).not.toContain(secret);
    expect(logs).not.toContain(secret);
    expect(JSON.stringify(session)).not.toContain(secret);
  }
});

test("use_own_key: the project's stored key is the one sent to the provider; without one the task fails clearly", async () => {
  const { llm } = stack;
  const { connectClient } = await import("@bas/service-kit");
  const { runner } = await import("@bas/proto");
  const admin = connectClient(runner.RunnerClient, `127.0.0.1:${stack.runner.grpcPort}`);
  try {
    expect(await admin.checkOwnKey({ projectId: PROJECT, model: "deepseek-v3" })).toEqual({
      present: false,
      provider: "default",
    });
    const stored = await admin.setProviderKey({ projectId: PROJECT, apiKey: "sk-own-project-key-1234" });
    expect(stored).toMatchObject({ projectId: PROJECT, provider: "default", keyHint: "1234" });
    expect(await admin.checkOwnKey({ projectId: PROJECT, model: "deepseek-v3" })).toEqual({
      present: true,
      provider: "default",
    });
    // The scripted model picks the scenario by the API key it receives.
    llm.script("sk-own-project-key-1234", [toolCallReply("done", { success: true, text: "served with the own key" })]);
    const created = await stack.create({ task: "Anything.", model: "deepseek-v3", useOwnKey: true });
    expect(await stack.waitFor(created.id, (s) => s.status === "stopped")).toMatchObject({
      output: "served with the own key",
      isTaskSuccessful: true,
    });
    // The stored key is encrypted at rest.
    const row = await stack.infra.db.selectFrom("runner_provider_keys").selectAll().executeTakeFirstOrThrow();
    expect(row.sealed_key).not.toContain("sk-own-project-key-1234");

    await admin.deleteProviderKey({ projectId: PROJECT });
    const without = await stack.create({ task: "Anything.", model: "deepseek-v3", useOwnKey: true });
    expect(await stack.waitFor(without.id, (s) => s.status === "stopped")).toMatchObject({
      isTaskSuccessful: false,
      lastStepSummary: 'Task failed: use_own_key is set but the project has no provider key stored for "default"',
    });
    await expect(admin.setProviderKey({ projectId: PROJECT, apiKey: "has space" })).rejects.toMatchObject({ code: 3 });
  } finally {
    admin.close();
  }
});
