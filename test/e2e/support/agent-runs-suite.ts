import { randomUUID } from "node:crypto";
import { billing, gateway as gatewayProto } from "@bas/proto";
import { connectClient } from "@bas/service-kit";
import { storedText } from "@bas/testing";
import { LOGIN_ACCOUNT, LOGIN_TEXTS } from "../../fixtures/sites";
import {
  indexOf,
  type RecordedRequest,
  lastInputText,
  promptText,
  toolCallReply,
  toolCallsReply,
} from "../../support/scripted-llm";
import { startUpstreamProxy, type UpstreamProxy } from "../../support/upstream-proxy";
import type { AgentStack, AgentStackOptions } from "./agent-stack";

/**
 * v4 runs end to end: the real runner, browser pool and billing, and the scripted model, against the stack
 * `startStack` brings up with the options given (`setupTimeoutMs`: how long that may take); `afterStack` runs once
 * the stack is closed.
 */
export function agentRunsSuite(
  startStack: (stackOptions: AgentStackOptions) => Promise<AgentStack>,
  options: { setupTimeoutMs?: number; afterStack?: () => Promise<void> } = {},
): void {
  let stack: AgentStack;
  /** A caller's own proxy (customProxy), which wants a password. */
  let callersProxy: UpstreamProxy;
  const PROXY_PASSWORD = `pw-${randomUUID()}`;
  beforeAll(async () => {
    callersProxy = await startUpstreamProxy({ username: "alice", password: PROXY_PASSWORD });
    stack = await startStack({ egressAllow: [`127.0.0.1:${callersProxy.port}`] });
  }, options.setupTimeoutMs);
  afterAll(async () => {
    await stack?.close();
    await callersProxy?.close();
    await options.afterStack?.();
  });

  const finished = (runId: string, timeoutMs?: number) => stack.runEnded(runId, timeoutMs);

  /** What billing's ledger of a run charged (the default project's). */
  async function billed(runId: string): Promise<{ input: number; output: number; cost: string }> {
    const admin = connectClient(gatewayProto.ProjectAdminClient, stack.grpc.GATEWAY_ADDR);
    const projectId = (await admin.listProjects({})).projects.find((p) => p.name === "default")!.id;
    admin.close();
    const ledger = connectClient(billing.BillingClient, stack.grpc.BILLING_ADDR);
    const totals = await ledger.getTotals({ projectId, runId });
    ledger.close();
    return { input: totals.inputTokens, output: totals.outputTokens, cost: totals.llmCostUsd };
  }

  /** A run that must complete: when it did not, the failure says how it ended and why. */
  async function completed(runId: string) {
    const run = await finished(runId);
    if (run.status !== "completed") throw new Error(`run ${runId} ended ${run.status}: ${run.error}`);
    return run;
  }

  /** A step the test lets go of when it wants: the run stays busy on it until then. */
  function gate() {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    return {
      open,
      step:
        <T>(reply: T) =>
        () =>
          opened.then(() => reply),
    };
  }

  test("a run polled to completed: its result, and token and cost totals equal to billing's ledger of the run", async () => {
    const { llm, sites } = stack;
    llm.script("gpt-4o", [
      toolCallReply(
        "go_to_url",
        { url: `${sites.url}/shop/product/pixelon-8` },
        { usage: { promptTokens: 2000, completionTokens: 100 } },
      ),
      (req) =>
        toolCallReply(
          "done",
          { success: true, text: `It costs ${/(\$[\d.,]+)/.exec(promptText(req))?.[1]}.` },
          { usage: { promptTokens: 2400, completionTokens: 80 } },
        ),
    ]);
    const created = await stack.request("POST", "/api/v4/runs", {
      task: "What does the Pixelon 8 cost?",
      model: "gpt-4o",
    });
    expect(created.status).toBe(200);
    const run = await finished(created.body.id);
    expect(run).toMatchObject({
      status: "completed",
      result: "It costs $699.00.",
      error: null,
      judgement: null,
      totalInputTokens: 4400,
      totalOutputTokens: 180,
    });

    expect(await billed(run.id)).toEqual({
      input: run.totalInputTokens,
      output: run.totalOutputTokens,
      cost: run.totalCostUsd,
    });
    expect(Number(run.totalCostUsd)).toBeGreaterThan(0);
  });

  test("browserSettings.customProxy: the run's browser goes out through the caller's proxy with its credentials, which are stored nowhere", async () => {
    const { llm, sites } = stack;
    llm.script("gpt-4o", [
      toolCallReply("go_to_url", { url: `${sites.url}/shop/product/pixelon-8` }),
      (req) => toolCallReply("done", { success: true, text: `It costs ${/(\$[\d.,]+)/.exec(promptText(req))?.[1]}.` }),
    ]);
    const customProxy = { host: "127.0.0.1", port: callersProxy.port, username: "alice", password: PROXY_PASSWORD };
    const created = await stack.request("POST", "/api/v4/runs", {
      task: "What does the Pixelon 8 cost?",
      model: "gpt-4o",
      browserSettings: { customProxy },
    });
    expect(created.status).toBe(200);
    expect(await completed(created.body.id)).toMatchObject({ result: "It costs $699.00." });
    expect(callersProxy.users.length).toBeGreaterThan(0);
    expect(new Set(callersProxy.users)).toEqual(new Set(["alice"]));
    const runEvents = (await stack.request("GET", `/api/v4/runs/${created.body.id}/events?limit=1000`)).body;
    for (const text of [
      await storedText(stack.infra),
      JSON.stringify(runEvents),
      ...llm.allRequests().map((r) => r.rawBody),
    ]) {
      expect(text).not.toContain(PROXY_PASSWORD);
    }
    const bad = await stack.request("POST", "/api/v4/runs", {
      task: "x",
      browserSettings: { customProxy: { ...customProxy, port: 0 } },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ["body", "browserSettings", "customProxy", "port"] });
  });

  test("allowedDomains: the model is told the limit; a navigation elsewhere (http and https) is refused and the model reads why; the run completes", async () => {
    const { llm, sites } = stack;
    const ip = new URL(sites.url).hostname;
    const reason = `Blocked by the browser's allowedDomains: evil.test is not ${ip}`;
    llm.script("claude-sonnet-4", [
      toolCallReply("go_to_url", { url: "http://evil.test/steal" }),
      toolCallReply("go_to_url", { url: "https://evil.test/" }),
      toolCallReply("go_to_url", { url: `${sites.url}/shop/product/pixelon-8` }),
      (req) => toolCallReply("done", { success: true, text: `It costs ${/(\$[\d.,]+)/.exec(promptText(req))?.[1]}.` }),
    ]);
    const created = await stack.request("POST", "/api/v4/runs", {
      task: "What does the Pixelon 8 cost?",
      model: "claude-sonnet-4",
      allowedDomains: [ip],
    });
    expect(created.status).toBe(200);
    expect(await completed(created.body.id)).toMatchObject({ result: "It costs $699.00." });
    const requests = llm.requests("claude-sonnet-4");
    expect(promptText(requests[0])).toContain(
      `The browser can reach only these hosts (a domain includes its subdomains); others are blocked: ${ip}`,
    );
    // The proxy's 403 (http) and the failed tunnel (https) both reach the model as the same reason.
    expect(promptText(requests[1])).toContain(`Could not open http://evil.test/steal: ${reason}`);
    expect(promptText(requests[2])).toContain(`Could not open https://evil.test/: ${reason}`);
  });

  test("a follow-up run in the same session sees the earlier turn and uses the same browser (the cart it filled)", async () => {
    const { llm, sites } = stack;
    llm.script("gpt-4o-mini", [
      toolCallReply("go_to_url", { url: `${sites.url}/shop/product/pixelon-8` }),
      (req) => toolCallReply("click", { index: indexOf(req, /<button>Add to cart</) }),
      toolCallReply("done", { success: true, text: "Added the Pixelon 8." }),
      toolCallReply("go_to_url", { url: `${sites.url}/shop/cart` }),
      (req) => toolCallReply("done", { success: true, text: /Total: \$[\d.]+/.exec(promptText(req))?.[0] ?? "empty" }),
    ]);
    const first = await stack.request("POST", "/api/v4/runs", {
      task: "Add the Pixelon 8 to the cart.",
      model: "gpt-4o-mini",
    });
    await completed(first.body.id);
    const second = await stack.request("POST", "/api/v4/runs", {
      task: "What is the cart total?",
      model: "gpt-4o-mini",
      sessionId: first.body.sessionId,
    });
    expect(second.status).toBe(200);
    expect(await completed(second.body.id)).toMatchObject({ result: "Total: $699.00" });
    const followUp = llm.requests("gpt-4o-mini")[3];
    expect(promptText(followUp)).toMatch(
      /<earlier_turns>[\s\S]*Task: Add the Pixelon 8 to the cart\.\s+Result: Added the Pixelon 8\.[\s\S]*<\/earlier_turns>/,
    );
  });

  test("the queue with a real runner: messages run in order after the busy run; interrupt cancels the active run and goes next", async () => {
    const { llm, sites } = stack;
    const hold = gate();
    const interruptHold = gate();
    llm.script("gpt-4.1", [
      // The first run, busy until the test lets go.
      hold.step(toolCallReply("go_to_url", { url: `${sites.url}/shop/` })),
      toolCallReply("done", { success: true, text: "first done" }),
      toolCallReply("done", { success: true, text: "a done" }),
      // The run of "b" is busy when the interrupt comes: it never gets past this step.
      interruptHold.step(toolCallReply("go_to_url", { url: `${sites.url}/shop/cart` })),
      toolCallReply("done", { success: true, text: "urgent done" }),
    ]);
    const run = (await stack.request("POST", "/api/v4/runs", { task: "first", model: "gpt-4.1" })).body;
    const s = `/api/v4/sessions/${run.sessionId}`;
    const a = (await stack.request("POST", `${s}/queue`, { text: "a" })).body;
    const b = (await stack.request("POST", `${s}/queue`, { text: "b" })).body;
    expect([a.status, b.status]).toEqual(["pending", "pending"]);
    hold.open();

    // "a" runs after the first run, then "b"; the interrupt cancels b's run and runs straight after it.
    const message = async (id: number) => (await stack.request("GET", `${s}/queue/${id}`)).body;
    // b's run is busy once its first model call is in (held by the gate).
    const deadline = Date.now() + 45_000;
    while (llm.requests("gpt-4.1").length < 4) {
      if (Date.now() > deadline) throw new Error("b never ran");
      await new Promise((r) => setTimeout(r, 150));
    }
    expect((await message(b.id)).status).toBe("consumed");
    const urgent = (await stack.request("POST", `${s}/queue`, { text: "urgent", interrupt: true })).body;
    expect(urgent.status).toBe("dispatching");
    const runB = await finished((await message(b.id)).runId);
    expect(runB.status).toBe("cancelled");
    interruptHold.open();
    expect(await finished(urgent.runId)).toMatchObject({ status: "completed", result: "urgent done" });
    expect(await finished((await message(a.id)).runId)).toMatchObject({ result: "a done" });
    expect(await finished(run.id)).toMatchObject({ result: "first done" });

    // What the model was asked, in order: every message exactly once, each after the one before it ended.
    const tasks = llm.requests("gpt-4.1").map((r) => /<task>\n([\s\S]*?)\n<\/task>/.exec(promptText(r))?.[1]);
    expect(tasks).toEqual(["first", "first", "a", "b", "urgent"]);
    // Only b's run was cut short, where the interrupt came in: a client freezes b's transcript there.
    expect((await stack.request("GET", `${s}/queue`)).body).toEqual({
      queue: [],
      steeringCutoffs: [{ sourceRunId: runB.id, createdAt: urgent.createdAt }],
    });
  });

  test("secretBindings: typed on its allowed host only, refused elsewhere; the model and the run never see the value", async () => {
    const { llm, sites } = stack;
    const host = new URL(sites.url).hostname;
    const signIn = (req: RecordedRequest, alias: string) =>
      toolCallsReply([
        { name: "input_text", arguments: { index: indexOf(req, /<input type=email/), text: LOGIN_ACCOUNT.username } },
        {
          name: "input_text",
          arguments: { index: indexOf(req, /<input type=password/), text: `<secret>${alias}</secret>` },
        },
        { name: "send_keys", arguments: { keys: "Enter" } },
      ]);
    llm.script("o4-mini", [
      toolCallReply("go_to_url", { url: `${sites.url}/login/` }),
      // "elsewhere" is bound to another host: this page must not get it.
      (req) => signIn(req, "elsewhere"),
      (req) => signIn(req, "pw"),
      (req) => toolCallReply("done", { success: promptText(req).includes(LOGIN_TEXTS.greeting), text: "Signed in." }),
    ]);
    const created = await stack.request("POST", "/api/v4/runs", {
      task: "Sign in as ada@example.test with the password <secret>pw</secret>.",
      model: "o4-mini",
      secretBindings: [
        { alias: "pw", source: { type: "inline", value: LOGIN_ACCOUNT.password }, allowedDomains: [host] },
        {
          alias: "elsewhere",
          source: { type: "inline", value: "not-for-this-site-42" },
          allowedDomains: ["example.com"],
        },
      ],
    });
    expect(created.status).toBe(200);
    expect(await finished(created.body.id)).toMatchObject({ status: "completed", result: "Signed in." });
    const requests = llm.requests("o4-mini");
    expect(promptText(requests[0])).toContain(`Keys: elsewhere (only on example.com), pw (only on ${host})`);
    // The refusal is what the model read after its first try, and the page never got that value.
    expect(lastInputText(requests[2])).toContain(
      `Secret elsewhere may not be typed on ${host} (only on elsewhere: example.com).`,
    );
    const events = (await stack.request("GET", `/api/v4/runs/${created.body.id}/events?limit=1000`)).body;
    for (const text of [JSON.stringify(events), ...llm.allRequests().map((r) => r.rawBody)]) {
      expect(text).not.toContain(LOGIN_ACCOUNT.password);
      expect(text).not.toContain("not-for-this-site-42");
    }
    // Bad bindings are exact 422s.
    const twice = await stack.request("POST", "/api/v4/runs", {
      task: "x",
      secretBindings: [
        { alias: "a", source: { type: "inline", value: "1" }, allowedDomains: ["example.com"] },
        { alias: "a", source: { type: "inline", value: "2" }, allowedDomains: ["example.com"] },
      ],
    });
    expect(twice.status).toBe(422);
    expect(twice.body.detail[0]).toMatchObject({ loc: ["body", "secretBindings", 1, "alias"] });
  });

  test("modelParams reach the provider as the model's route takes them; what the route does not take is a 422", async () => {
    const { llm } = stack;
    const done = toolCallReply("done", { success: true, text: "Done." });
    llm.script("gpt-4.1-mini", [done]);
    const plain = await stack.request("POST", "/api/v4/runs", {
      task: "Say done.",
      model: "gpt-4.1-mini",
      modelParams: { temperature: 0.3, topP: 0.9, maxOutputTokens: 700 },
    });
    expect(await finished(plain.body.id)).toMatchObject({ status: "completed", result: "Done." });
    expect(llm.requests("gpt-4.1-mini").at(-1)!.body).toMatchObject({ temperature: 0.3, top_p: 0.9, max_tokens: 700 });
    expect(llm.requests("gpt-4.1-mini").at(-1)!.body).not.toHaveProperty("reasoning_effort");

    llm.script("o4-mini", [done]);
    const reasoning = await stack.request("POST", "/api/v4/runs", {
      task: "Say done.",
      model: "o4-mini",
      modelParams: { thinkingLevel: "high", maxOutputTokens: 900 },
    });
    expect(await finished(reasoning.body.id)).toMatchObject({ status: "completed" });
    const sent = llm.requests("o4-mini").at(-1)!.body;
    expect(sent).toMatchObject({ reasoning_effort: "high", max_completion_tokens: 900 });
    expect(sent).not.toHaveProperty("max_tokens");

    for (const [model, modelParams, field] of [
      ["gpt-4.1-mini", { thinkingLevel: "low" }, "thinkingLevel"],
      ["o4-mini", { temperature: 0.5 }, "temperature"],
      ["gpt-4.1-mini", { seed: 7 }, "seed"],
      ["gpt-4.1-mini", { temperature: 3 }, "temperature"],
    ] as const) {
      const refused = await stack.request("POST", "/api/v4/runs", { task: "x", model, modelParams });
      expect({ model, status: refused.status, loc: refused.body.detail?.[0]?.loc }).toEqual({
        model,
        status: 422,
        loc: ["body", "modelParams", field],
      });
    }
  });

  test("judge: the completed run carries the verdict on its steps and last page; the judge's tokens are in its totals, equal to billing's ledger", async () => {
    const { llm, sites } = stack;
    const verdict = {
      verdict: false,
      reasoning: "The product page shows $699.00, the agent answered $599.00.",
      failureReason: "The answer contradicts the page.",
      impossibleTask: false,
      reachedCaptcha: false,
    };
    llm.script("gemini-2.5-pro", [
      toolCallReply(
        "go_to_url",
        { url: `${sites.url}/shop/product/pixelon-8` },
        { usage: { promptTokens: 2000, completionTokens: 100 } },
      ),
      toolCallReply(
        "done",
        { success: true, text: "It costs $599.00." },
        { usage: { promptTokens: 2400, completionTokens: 80 } },
      ),
      toolCallReply("judgement", verdict, { usage: { promptTokens: 3000, completionTokens: 60 } }),
    ]);
    const created = await stack.request("POST", "/api/v4/runs", {
      task: "What does the Pixelon 8 cost?",
      model: "gemini-2.5-pro",
      judge: { context: "The price must be the one on the product page." },
    });
    expect(created.status).toBe(200);
    const run = await finished(created.body.id);
    // Terminal with the verdict and with the judge's call in the costs: nothing changes after this.
    expect(run).toMatchObject({
      status: "completed",
      result: "It costs $599.00.",
      judgement: verdict,
      totalInputTokens: 7400,
      totalOutputTokens: 240,
    });
    const judgeRequest = llm.requests("gemini-2.5-pro")[2];
    const prompt = promptText(judgeRequest);
    for (const part of ["What does the Pixelon 8 cost?", "must be the one on the product page", "$699.00", "$599.00"]) {
      expect(prompt).toContain(part);
    }
    expect(judgeRequest.body.tools.map((t: any) => t.function.name)).toEqual(["judgement"]);

    expect(await billed(run.id)).toEqual({
      input: 7400,
      output: 240,
      cost: run.totalCostUsd,
    });
    const events = (await stack.request("GET", `/api/v4/runs/${run.id}/events?limit=100`)).body.events;
    expect(events.at(-1)).toMatchObject({ type: "run.completed", data: { success: true, judgement: verdict } });

    // A bad judge object is an exact 422.
    const bad = await stack.request("POST", "/api/v4/runs", { task: "x", judge: { context: 5, strict: true } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: any) => d.loc)).toEqual(
      expect.arrayContaining([
        ["body", "judge", "context"],
        ["body", "judge", "strict"],
      ]),
    );
  });
}
