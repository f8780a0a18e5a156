import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runEnv } from "@bas/testing";
import { promisify } from "node:util";
import { findChromium } from "@bas/embedded-infra";
import { LOGIN_ACCOUNT, LOGIN_TEXTS } from "../../fixtures/sites";
import { indexOf, lastInputText, promptText, toolCallReply, toolCallsReply } from "../../support/scripted-llm";
import type { AgentStack } from "./agent-stack";

/**
 * v3 sessions end to end: the real runner, browser pool and billing, and the scripted model, against the stack
 * `startStack` brings up (`setupTimeoutMs`: how long that may take); `afterStack` runs once the stack is closed.
 */
export function agentSessionsSuite(
  startStack: () => Promise<AgentStack>,
  options: { setupTimeoutMs?: number; afterStack?: () => Promise<void> } = {},
): void {
  let stack: AgentStack;
  beforeAll(async () => {
    stack = await startStack();
  }, options.setupTimeoutMs);
  afterAll(async () => {
    await stack?.close();
    await options.afterStack?.();
  });

  async function until(check: () => Promise<boolean> | boolean, timeoutMs = 20_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error("condition not met in time");
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }

  test("the shop task through REST: right output, success, step count, messages, tokens and cost", async () => {
    const { llm, sites } = stack;
    // The scripted model serves each test by the provider model name its model value routes to.
    llm.script("gpt-4o", [
      toolCallReply(
        "go_to_url",
        { url: `${sites.url}/shop/` },
        { usage: { promptTokens: 2000, completionTokens: 100 } },
      ),
      (req) =>
        toolCallsReply(
          [
            { name: "input_text", arguments: { index: indexOf(req, /<input type=search/), text: "Nimbus" } },
            { name: "click", arguments: { index: indexOf(req, /<button>Search</) } },
          ],
          { usage: { promptTokens: 2500, completionTokens: 120 } },
        ),
      (req) =>
        toolCallReply(
          "click",
          { index: indexOf(req, />Nimbus Chromebook</) },
          { usage: { promptTokens: 2600, completionTokens: 40 } },
        ),
      (req) =>
        toolCallReply(
          "done",
          {
            success: true,
            text: `The Nimbus Chromebook costs ${/Nimbus Chromebook\n(\$[\d.]+)/.exec(promptText(req))?.[1]}.`,
          },
          { usage: { promptTokens: 2700, completionTokens: 60 } },
        ),
    ]);
    const created = await stack.request("POST", "/api/v3/sessions", {
      task: "Find the price of the Nimbus Chromebook.",
      model: "gpt-4o",
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ status: "created", isTaskSuccessful: null, stepCount: 0 });

    const session = await stack.waitFor(created.body.id, (s) => s.status === "stopped");
    expect(session).toMatchObject({
      output: "The Nimbus Chromebook costs $349.99.",
      isTaskSuccessful: true,
      stepCount: 4,
      title: "Find the price of the Nimbus Chromebook.",
      lastStepSummary: "Task completed",
      totalInputTokens: 9800,
      totalOutputTokens: 320,
    });
    expect(session.screenshotUrl).toMatch(/^http/);
    // Billing priced the model calls (gpt-4o: $2.5 / $10 per million tokens).
    const priced = await stack.waitFor(created.body.id, (s) => s.llmCostUsd !== "0");
    expect(priced.llmCostUsd).toBe("0.0277");

    const messages = await stack.request("GET", `/api/v3/sessions/${created.body.id}/messages?limit=100`);
    expect(messages.status).toBe(200);
    const list = messages.body.messages as Array<{ role: string; type: string; summary: string | null; data: string }>;
    expect(list[0]).toMatchObject({
      role: "human",
      type: "user_message",
      data: "Find the price of the Nimbus Chromebook.",
    });
    expect(list.filter((m) => m.type === "browser_action").map((m) => m.summary)).toEqual([
      expect.stringMatching(/^Navigating to 127\.0\.0\.1:\d+\/shop\/$/),
      "Typing 'Nimbus' into 'Search products'",
      "Clicking 'Search'",
      "Clicking 'Nimbus Chromebook'",
      "Task completed",
    ]);
    expect(list.at(-1)).toMatchObject({ role: "ai", type: "completion", data: "The Nimbus Chromebook costs $349.99." });
    // The screenshot of a step is served through its presigned URL.
    const shot = await fetch(session.screenshotUrl);
    expect(shot.status).toBe(200);
    expect(shot.headers.get("content-type")).toBe("image/jpeg");
  });

  test("keepAlive: the session stays idle with its browser, and a second task sees the first one's cart", async () => {
    const { llm, sites } = stack;
    llm.script("gpt-4o-mini", [
      toolCallReply("go_to_url", { url: `${sites.url}/shop/product/pixelon-8` }),
      (req) => toolCallReply("click", { index: indexOf(req, /<button>Add to cart</) }),
      toolCallReply("done", { success: true, text: "Added." }),
      toolCallReply("go_to_url", { url: `${sites.url}/shop/cart` }),
      (req) =>
        toolCallReply("done", { success: true, text: /Total: \$[\d.]+/.exec(promptText(req))?.[0] ?? "nothing" }),
    ]);
    const first = await stack.request("POST", "/api/v3/sessions", {
      task: "Add the Pixelon 8 to the cart.",
      model: "gpt-4o-mini",
      keepAlive: true,
    });
    await stack.waitFor(first.body.id, (s) => s.status === "idle" && s.isTaskSuccessful === true);
    const second = await stack.request("POST", "/api/v3/sessions", {
      task: "What is the cart total?",
      model: "gpt-4o-mini",
      sessionId: first.body.id,
    });
    expect(second.status).toBe(200);
    const done = await stack.waitFor(first.body.id, (s) => s.status === "idle" && s.output?.startsWith("Total"));
    expect(done).toMatchObject({ output: "Total: $699.00", isTaskSuccessful: true });
  });

  test("outputSchema: the corrected answer after a non-conforming one is the session's output", async () => {
    const { llm } = stack;
    llm.script("gpt-4.1-mini", [
      toolCallReply("done", { success: true, data: { name: "Orbit Earbuds", price: "89.50" } }),
      toolCallReply("done", { success: true, data: { name: "Orbit Earbuds", price: 89.5 } }),
    ]);
    const outputSchema = {
      type: "object",
      properties: { name: { type: "string" }, price: { type: "number" } },
      required: ["name", "price"],
      additionalProperties: false,
    };
    const created = await stack.request("POST", "/api/v3/sessions", {
      task: "Name and price of the earbuds.",
      model: "gpt-4.1-mini",
      outputSchema,
    });
    const session = await stack.waitFor(created.body.id, (s) => s.status === "stopped");
    expect(session).toMatchObject({
      output: { name: "Orbit Earbuds", price: 89.5 },
      isTaskSuccessful: true,
      stepCount: 2,
      outputSchema,
    });
    expect(promptText(llm.requests("gpt-4.1-mini")[1])).toContain("/price must be number");
  });

  test("codeMode: {text, code, output}, and the code runs on its own to the same result", async () => {
    const { llm, sites } = stack;
    llm.script("gpt-4.1", [
      toolCallReply("go_to_url", { url: `${sites.url}/shop/search?category=audio` }),
      (req) => toolCallReply("click", { index: indexOf(req, />Orbit Wireless Headphones</) }),
      toolCallReply("done", { success: true, text: "The headphones cost $199.95." }),
    ]);
    const created = await stack.request("POST", "/api/v3/sessions", {
      task: "Price of the Orbit headphones.",
      model: "gpt-4.1",
      codeMode: true,
    });
    const session = await stack.waitFor(created.body.id, (s) => s.status === "stopped");
    expect(session.isTaskSuccessful).toBe(true);
    const { text, code, output } = session.output;
    expect(text).toBe("The headphones cost $199.95.");
    expect(output).toMatchObject({ url: `${sites.url}/shop/product/orbit-headphones` });
    expect(output.text).toContain("$199.95");

    const dir = mkdtempSync(join(tmpdir(), "e2e-code-"));
    try {
      writeFileSync(join(dir, "task.js"), code);
      symlinkSync(join(__dirname, "../../../node_modules"), join(dir, "node_modules"));
      const { stdout } = await promisify(execFile)(process.execPath, ["task.js"], {
        cwd: dir,
        env: { ...runEnv(), HOME: dir, CHROMIUM_PATH: findChromium() },
        timeout: 60_000,
      });
      expect(JSON.parse(stdout.trim().split("\n").at(-1)!)).toEqual(output);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a bad tool call, invalid JSON and a nonexistent index: the agent recovers and finishes", async () => {
    const { llm, sites } = stack;
    llm.script("o4-mini", [
      toolCallReply("go_to_url", { url: `${sites.url}/form/` }),
      toolCallReply("submit_form", {}),
      toolCallReply("input_text", "{index: 1, text: 'x'}"),
      toolCallReply("input_text", { index: 4242, text: "Ada" }),
      (req) => toolCallReply("input_text", { index: indexOf(req, /label="Full name"/), text: "Ada Lovelace" }),
      toolCallReply("done", { success: true, text: "Filled." }),
    ]);
    const created = await stack.request("POST", "/api/v3/sessions", {
      task: "Fill in the name.",
      model: "o4-mini",
      thinkingLevel: "low",
    });
    const session = await stack.waitFor(created.body.id, (s) => s.status === "stopped");
    expect(session).toMatchObject({ isTaskSuccessful: true, output: "Filled.", stepCount: 6 });
    const requests = llm.requests("o4-mini");
    expect(requests[0].body.reasoning_effort).toBe("low");
    expect(promptText(requests[5])).toContain('value="Ada Lovelace"');
    const messages = (await stack.request("GET", `/api/v3/sessions/${created.body.id}/messages?limit=100`)).body
      .messages;
    expect(messages.filter((m: { type: string }) => m.type === "browser_action_error")).toHaveLength(3);
  });

  test("stop with strategy task: idle within one step; then with strategy session: stopped and the browser gone", async () => {
    const { llm, sites } = stack;
    llm.script("gemini-2.5-pro", [
      toolCallReply("go_to_url", { url: `${sites.url}/spa/` }),
      toolCallReply("wait", { seconds: 1 }, { delayMs: 30_000 }),
    ]);
    const created = await stack.request("POST", "/api/v3/sessions", {
      task: "Watch the catalog.",
      model: "gemini-2.5-pro",
      keepAlive: true,
    });
    const id = created.body.id;
    await stack.waitFor(id, (s) => s.status === "running" && s.stepCount === 1);
    await until(() => llm.requests("gemini-2.5-pro").length === 2);
    const stopped = await stack.request("POST", `/api/v3/sessions/${id}/stop`, { strategy: "task" });
    expect(stopped.status).toBe(200);
    const idle = await stack.waitFor(id, (s) => s.status === "idle");
    expect(idle).toMatchObject({ isTaskSuccessful: false, stepCount: 1 });
    await until(() => stack.runner.status().activeTasks === 0);

    expect((await stack.request("POST", `/api/v3/sessions/${id}/stop`, { strategy: "session" })).status).toBe(200);
    await stack.waitFor(id, (s) => s.status === "stopped");
    // The session's browser, as the project's browser list shows it.
    await until(async () => {
      const { body } = await stack.request("GET", "/api/v4/browsers?pageSize=100");
      const mine = (body.items as Array<{ agentSessionId: string | null; status: string }>).filter(
        (b) => b.agentSessionId === id,
      );
      return mine.length === 1 && mine[0].status === "stopped";
    });
  });

  test("sensitiveData through REST: typed into the page, never in a prompt, a message or the session", async () => {
    const { llm, sites } = stack;
    llm.script("claude-3-5-haiku", [
      toolCallReply("go_to_url", { url: `${sites.url}/login/` }),
      (req) =>
        toolCallsReply([
          { name: "input_text", arguments: { index: indexOf(req, /<input type=email/), text: LOGIN_ACCOUNT.username } },
          {
            name: "input_text",
            arguments: { index: indexOf(req, /<input type=password/), text: "<secret>pw</secret>" },
          },
          { name: "send_keys", arguments: { keys: "Enter" } },
        ]),
      (req) => toolCallReply("done", { success: promptText(req).includes(LOGIN_TEXTS.greeting), text: "Signed in." }),
    ]);
    const created = await stack.request("POST", "/api/v3/sessions", {
      task: "Sign in as ada@example.test with the password <secret>pw</secret>.",
      model: "claude-3-5-haiku",
      sensitiveData: { pw: LOGIN_ACCOUNT.password },
    });
    const session = await stack.waitFor(created.body.id, (s) => s.status === "stopped");
    expect(session).toMatchObject({ isTaskSuccessful: true, output: "Signed in." });
    const messages = await stack.request("GET", `/api/v3/sessions/${created.body.id}/messages?limit=100`);
    for (const text of [
      JSON.stringify(messages.body),
      JSON.stringify(session),
      ...llm.allRequests().map((r) => r.rawBody),
    ]) {
      expect(text).not.toContain(LOGIN_ACCOUNT.password);
    }
  });

  test("maxCostUsd: when the next step would not fit under the cap the task ends, unsuccessful, with a clear summary", async () => {
    const { llm, sites } = stack;
    // gemini-2.0-flash: $0.1 / $0.4 per million tokens; each step reports 1M input tokens = $0.10.
    const costly = { usage: { promptTokens: 1_000_000, completionTokens: 0 } };
    llm.script("gemini-2.0-flash", [
      toolCallReply("go_to_url", { url: `${sites.url}/shop/` }, costly),
      toolCallReply("scroll", { direction: "down" }, costly),
      toolCallReply("scroll", { direction: "up" }, costly),
      toolCallReply("done", { success: true, text: "never reached" }, costly),
    ]);
    const created = await stack.request("POST", "/api/v3/sessions", {
      task: "Browse.",
      model: "gemini-2.0-flash",
      maxCostUsd: "0.15",
    });
    const session = await stack.waitFor(created.body.id, (s) => s.status === "stopped");
    expect(session.isTaskSuccessful).toBe(false);
    expect(session.lastStepSummary).toMatch(/cost cap of 0\.15 USD was reached/);
    expect(llm.remaining("gemini-2.0-flash")).toBeGreaterThanOrEqual(2);
  });

  test("use_own_key without a stored provider key is refused at creation with a clear 400, and nothing runs", async () => {
    const before = stack.llm.allRequests().length;
    const reply = await stack.request("POST", "/api/v3/sessions", {
      task: "Anything.",
      model: "deepseek-v3",
      use_own_key: true,
    });
    expect(reply.status).toBe(400);
    expect(reply.body.detail).toMatch(/use_own_key is set but the project has no stored API key for provider/);
    const list = await stack.request("GET", "/api/v3/sessions?page_size=100");
    expect(list.body.sessions.some((s: { model: string }) => s.model === "deepseek-v3")).toBe(false);
    expect(stack.llm.allRequests().length).toBe(before);
  });

  test("a task cannot take its browser to the host: file:// and loopback are refused, and the model and the caller see why", async () => {
    const { llm } = stack;
    // The scripted model itself is a service on this host's loopback, which the fixture sites' allowance does not open.
    const hostService = `http://${new URL(llm.url).host}/v1/models`;
    const seen: string[] = [];
    llm.script("gpt-4.1", [
      toolCallReply("go_to_url", { url: "file:///etc/passwd" }),
      (req) => {
        seen.push(lastInputText(req));
        return toolCallReply("go_to_url", { url: hostService });
      },
      (req) => {
        seen.push(lastInputText(req));
        return toolCallReply("done", { success: false, text: "Both were refused." });
      },
    ]);
    const created = await stack.request("POST", "/api/v3/sessions", {
      task: "Read the host's files.",
      model: "gpt-4.1",
    });
    expect(created.status).toBe(200);
    await stack.waitFor(created.body.id, (s) => s.status === "stopped");

    // The runner refuses other schemes before the browser sees them; the browser's policy would block file:// too.
    expect(seen[0]).toMatch(/scheme of "file:\/\/\/etc\/passwd" are not allowed/);
    expect(seen[1]).toMatch(/Blocked by the browser egress policy: 127\.0\.0\.1:\d+: .*loopback/);
    const messages = await stack.request("GET", `/api/v3/sessions/${created.body.id}/messages?limit=100`);
    const text = JSON.stringify(messages.body);
    expect(text).toMatch(/not allowed/);
    expect(text).toMatch(/Blocked by the browser egress policy: 127\.0\.0\.1:\d+: .*loopback/);
    expect(text).not.toMatch(/root:x:0:0/);
    expect(seen.join("\n")).not.toMatch(/root:x:0:0|"object":\s*"list"/);
  });

  test("a session's liveUrl is its own credential: it leads to its browser's live view once the browser is up, and says when the session ended", async () => {
    const created = await stack.request("POST", "/api/v3/sessions", { keepAlive: true });
    const { id, liveUrl } = created.body;
    const open = (url: string) => fetch(url, { redirect: "manual" });
    expect((await open(`${liveUrl.slice(0, -4)}AAAA`)).status).toBe(404);

    // Until the browser is up the page looks again every second; then it is a redirect to the browser's live view.
    let answer = await open(liveUrl);
    for (const deadline = Date.now() + 30_000; answer.status !== 302 && Date.now() < deadline; ) {
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain("Starting the browser");
      await new Promise((r) => setTimeout(r, 200));
      answer = await open(liveUrl);
    }
    expect(answer.status).toBe(302);
    const browserLive = answer.headers.get("location")!;
    expect(browserLive).toMatch(/\/live\/[0-9a-f-]{36}\/[A-Za-z0-9_-]{32}$/);
    const page = await fetch(browserLive);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('id="screen"');
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors");

    await stack.request("POST", `/api/v3/sessions/${id}/stop`, { strategy: "session" });
    const ended = await open(liveUrl);
    expect(ended.status).toBe(200);
    expect(await ended.text()).toContain("This session has ended.");
  });

  test("enableRecording: once the session ended, its read carries the recording of its browser, an MP4 of the task", async () => {
    const { llm, sites } = stack;
    llm.script("gpt-4o-mini", [
      toolCallReply("go_to_url", { url: `${sites.url}/shop/` }),
      toolCallReply("done", { text: "looked at the shop", success: true }),
    ]);
    const created = await stack.request("POST", "/api/v3/sessions", {
      task: "Look at the shop",
      model: "gpt-4o-mini",
      enableRecording: true,
    });
    expect(created.status).toBe(200);
    const id = created.body.id;
    let read = created;
    // The session stops when its task is done; the recording is added when browser-pool has stored it, which may be
    // just before or just after: the read is waited for until it shows both.
    await until(async () => {
      read = await stack.request("GET", `/api/v3/sessions/${id}`);
      return read.body.status === "stopped" && read.body.recordingUrls.length > 0;
    }, 60_000);
    expect(read.body.recordingUrls).toHaveLength(1);
    const video = await fetch(read.body.recordingUrls[0]);
    expect(video.status).toBe(200);
    expect(video.headers.get("content-type")).toBe("video/mp4");
    const dir = mkdtempSync(join(tmpdir(), "bas-session-recording-"));
    try {
      writeFileSync(join(dir, "session.mp4"), Buffer.from(await video.arrayBuffer()));
      const { stdout } = await promisify(execFile)("ffprobe", [
        ...["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name", "-of", "csv=p=0"],
        join(dir, "session.mp4"),
      ]);
      expect(stdout.trim()).toBe("h264");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Lists never carry presigned URLs.
    const listed = await stack.request("GET", "/api/v3/sessions?page_size=100");
    expect(listed.body.sessions.find((s: { id: string }) => s.id === id).recordingUrls).toEqual([]);
  }, 90_000);

  test("a download the agent causes is told in its step and kept with the session's browser", async () => {
    const { llm, sites } = stack;
    llm.script("gpt-4.1-mini", [
      toolCallReply("go_to_url", { url: `${sites.url}/shop/cart` }),
      (req) => toolCallReply("click", { index: indexOf(req, /Download the cart as CSV/) }),
      toolCallReply("done", { text: "exported the cart", success: true }),
    ]);
    const created = await stack.request("POST", "/api/v3/sessions", {
      task: "Export the cart",
      model: "gpt-4.1-mini",
      keepAlive: true,
    });
    expect(created.status).toBe(200);
    const id = created.body.id;
    await until(async () => (await stack.request("GET", `/api/v3/sessions/${id}`)).body.status === "idle", 60_000);
    const messages = await stack.request("GET", `/api/v3/sessions/${id}/messages?limit=100`);
    const results = (messages.body.messages as Array<{ type: string; data: string }>).filter(
      (m) => m.type === "browser_action_result",
    );
    expect(results.some((m) => m.data.includes('The page started downloading "cart.csv"'))).toBe(true);

    // The session's browser lists the file, and its URL gives the CSV the shop made.
    const browsers = await stack.request("GET", "/api/v4/browsers?pageSize=100");
    const browser = browsers.body.items.find((b: { agentSessionId: string | null }) => b.agentSessionId === id);
    let files: Array<{ path: string; url: string }> = [];
    await until(async () => {
      files = (await stack.request("GET", `/api/v4/browsers/${browser.id}/downloads?includeUrls=true`)).body.files;
      return files.length === 1;
    });
    expect(files[0].path).toBe("cart.csv");
    expect(await (await fetch(files[0].url)).text()).toMatch(/^product,quantity,subtotal\n/);
    await stack.request("POST", `/api/v3/sessions/${id}/stop`, { strategy: "session" });
  }, 90_000);

  test("a session or run with an unknown profileId is a 404 at creation, and nothing starts", async () => {
    const unknown = "0b5e1c9a-8f1e-4a57-9a43-5c2f6f0f8c11";
    const session = await stack.request("POST", "/api/v3/sessions", { task: "t", profileId: unknown });
    expect(session).toMatchObject({ status: 404, body: { detail: "Profile not found" } });
    const run = await stack.request("POST", "/api/v4/runs", { task: "t", browserSettings: { profileId: unknown } });
    expect(run).toMatchObject({ status: 404, body: { detail: "Profile not found" } });
    // A profile of the project is taken.
    const profile = await stack.request("POST", "/api/v4/profiles", { name: "p" });
    expect(profile.status).toBe(201);
    const idle = await stack.request("POST", "/api/v3/sessions", { keepAlive: true, profileId: profile.body.id });
    expect(idle.status).toBe(200);
    expect(idle.body.profileId).toBe(profile.body.id);
    await stack.request("POST", `/api/v3/sessions/${idle.body.id}/stop`, { strategy: "session" });
  });
}
