import {
  indexOf,
  httpError,
  promptText,
  toolCallReply,
  toolCallsReply,
  textReply,
} from "../../../test/support/scripted-llm";
import { type AgentHarness, startAgentHarness } from "./support/agent-harness";

let h: AgentHarness;
beforeAll(async () => {
  h = await startAgentHarness();
});
afterAll(() => h.close());

test("the shop task: search, open a product, read its price; steps, messages and tokens are recorded", async () => {
  h.llm.script("shop", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/shop/` }, { usage: { promptTokens: 500, completionTokens: 20 } }),
    (req) =>
      toolCallsReply(
        [
          { name: "input_text", arguments: { index: indexOf(req, /<input type=search/), text: "Pixelon" } },
          { name: "send_keys", arguments: { keys: "Enter" } },
        ],
        { usage: { promptTokens: 600, completionTokens: 30 } },
      ),
    (req) =>
      toolCallReply(
        "click",
        { index: indexOf(req, />Pixelon 8 Mini Phone</) },
        { usage: { promptTokens: 700, completionTokens: 15 } },
      ),
    (req) => {
      const price = /\$\d+\.\d\d/.exec(promptText(req))?.[0];
      return toolCallReply(
        "done",
        { success: true, text: `The Pixelon 8 Mini Phone costs ${price}.` },
        { usage: { promptTokens: 800, completionTokens: 25 } },
      );
    },
  ]);
  const run = await h.run("shop", "Find the price of the Pixelon 8 Mini Phone in the shop.");
  expect(run.outcome).toMatchObject({
    kind: "completed",
    success: true,
    output: "The Pixelon 8 Mini Phone costs $549.00.",
    summary: "Task completed",
    steps: 4,
    // What a judge of the run reads: every step, and the page the model saw last.
    records: expect.arrayContaining([expect.objectContaining({ step: 4 })]),
    lastPage: expect.stringContaining("$549.00"),
  });
  expect(run.steps.map((s) => s.summary)).toEqual([
    expect.stringMatching(/^Navigating to 127\.0\.0\.1:\d+\/shop\/$/),
    "Typing 'Pixelon' into 'Search products', then Pressing Enter",
    "Clicking 'Pixelon 8 Mini Phone'",
    "Task completed",
  ]);
  expect(run.steps.map((s) => s.step)).toEqual([1, 2, 3, 4]);
  const step2 = run.steps[1].messages.map((m) => m.type);
  expect(step2).toEqual(["browser_action", "browser_action_result", "browser_action", "browser_action_result"]);
  expect(run.steps[3].messages.at(-1)).toMatchObject({
    type: "completion",
    data: "The Pixelon 8 Mini Phone costs $549.00.",
  });
  expect(run.totals).toEqual({ inputTokens: 2600, outputTokens: 90 });
  // The model saw the search results and then the product page.
  const requests = h.llm.requests("shop");
  expect(promptText(requests[2])).toContain("Results for “Pixelon”");
  expect(promptText(requests[3])).toContain(`Current URL: ${h.sites.url}/shop/product/pixelon-8-mini`);
  expect(requests[0].body.tools.map((t: any) => t.function.name)).toEqual(
    expect.arrayContaining([
      "go_to_url",
      "click",
      "input_text",
      "select_option",
      "send_keys",
      "scroll",
      "go_back",
      "open_tab",
      "switch_tab",
      "close_tab",
      "extract",
      "wait",
      "done",
    ]),
  );
});

test("a bad tool name, invalid JSON and a nonexistent index are told to the model and the task goes on", async () => {
  h.llm.script("errors", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/shop/` }),
    toolCallReply("teleport", { to: "moon" }),
    toolCallReply("click", '{"index": 3,,'),
    toolCallReply("click", { index: 999 }),
    textReply("I think I am done."),
    (req) => toolCallReply("click", { index: indexOf(req, />Cart \(0\)</) }),
    toolCallReply("done", { success: true, text: "The cart is empty." }),
  ]);
  const run = await h.run("errors", "Open the cart.");
  expect(run.outcome).toMatchObject({ kind: "completed", success: true, output: "The cart is empty.", steps: 7 });
  const requests = h.llm.requests("errors");
  expect(promptText(requests[2])).toContain('Unknown action "teleport"');
  expect(promptText(requests[3])).toMatch(/arguments of click are not valid JSON/);
  expect(promptText(requests[4])).toContain("There is no element with index 999");
  expect(promptText(requests[5])).toContain("without calling a tool");
  expect(run.steps.map((s) => s.messages.some((m) => m.type === "browser_action_error"))).toEqual([
    false,
    true,
    true,
    true,
    true,
    false,
    false,
  ]);
  expect(promptText(requests[6])).toContain("Your cart is empty.");
});

test("iframes and open shadow roots: elements inside them are listed and can be used", async () => {
  h.llm.script("frames", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/frames/` }),
    (req) =>
      toolCallsReply([
        { name: "input_text", arguments: { index: indexOf(req, /placeholder="Frame note"/), text: "hello frame" } },
        { name: "click", arguments: { index: indexOf(req, />Save in frame</) } },
        { name: "input_text", arguments: { index: indexOf(req, /placeholder="Your name"/), text: "Grace" } },
        { name: "click", arguments: { index: indexOf(req, />Greet from shadow</) } },
        { name: "click", arguments: { index: indexOf(req, />Deep button</) } },
      ]),
    toolCallReply("done", { success: true, text: "ok" }),
  ]);
  await h.run("frames", "Use the frames page.");
  const last = promptText(h.llm.requests("frames")[2]);
  expect(last).toContain("Saved in frame: hello frame");
  expect(last).toContain("Hello, Grace!");
  expect(last).toContain("Deep button clicked");
});

test("a secret is typed only into a field of an allowed host: a frame from elsewhere on an allowed page is refused", async () => {
  const port = new URL(h.sites.url).port;
  const foreign = `${h.sites.url}/frames/foreign?origin=http://localhost:${port}`;
  const typeSecret = (req: Parameters<typeof indexOf>[0]) =>
    toolCallsReply([
      {
        name: "input_text",
        arguments: { index: indexOf(req, /placeholder="Frame note"/), text: "<secret>pw</secret>" },
      },
      { name: "click", arguments: { index: indexOf(req, />Save in frame</) } },
    ]);
  h.llm.script("foreign-frame", [
    toolCallReply("go_to_url", { url: foreign }),
    typeSecret,
    toolCallReply("go_to_url", { url: `${h.sites.url}/frames/` }),
    typeSecret,
    toolCallReply("done", { success: true, text: "ok" }),
  ]);
  await h.run("foreign-frame", "Save the note <secret>pw</secret> in the frame.", {
    secrets: { pw: "frame-secret-7" },
    secretDomains: { pw: ["127.0.0.1"] },
  });
  const requests = h.llm.requests("foreign-frame");
  // The page is on 127.0.0.1, but the field is in a document from localhost: refused before anything is typed.
  expect(promptText(requests[2])).toContain("Secret pw may not be typed on localhost (only on pw: 127.0.0.1).");
  // The same frame from the page's own host takes it (the page shows the value, which the model reads redacted).
  expect(promptText(requests[4])).toContain("Saved in frame: <secret>pw</secret>");
});

test("the step limit ends the task as unsuccessful with a clear summary", async () => {
  h.llm.script("limit", [toolCallReply("wait", { seconds: 0 }), toolCallReply("wait", { seconds: 0 })]);
  const run = await h.run("limit", "Wait forever.", { maxSteps: 2 });
  expect(run.outcome).toMatchObject({
    kind: "completed",
    success: false,
    output: null,
    summary: "Stopped: the step limit of 2 steps was reached before the task was done",
    steps: 2,
  });
  expect(h.llm.remaining("limit")).toBe(0);
});

test("a stop ends the loop within the step: the model call in flight is abandoned", async () => {
  const stop = new AbortController();
  h.llm.script("stop", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/shop/` }),
    toolCallReply("wait", { seconds: 0 }, { delayMs: 5_000 }),
    toolCallReply("done", { success: true, text: "never" }),
  ]);
  const run = await h.run("stop", "Shop.", {
    signal: stop.signal,
    onStep: (s) => s.step === 1 && setTimeout(() => stop.abort(), 100),
  });
  expect(run.outcome).toEqual({ kind: "stopped", steps: 1 });
  expect(run.steps).toHaveLength(1);
});

test("a step's report goes on while the next step looks and decides; the next action waits for it", async () => {
  const order: string[] = [];
  let release!: () => void;
  h.llm.script("pipelined", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/shop/` }),
    () => {
      order.push("model asked for step 2");
      setTimeout(release, 300);
      return toolCallReply("go_to_url", { url: `${h.sites.url}/form/` });
    },
    toolCallReply("done", { success: true, text: "ok" }),
  ]);
  const run = await h.run("pipelined", "Shop, then the form.", {
    onStep: async (step) => {
      if (step.step !== 1) return;
      // Before anything is awaited: the next step's look and decision go on meanwhile.
      order.push("report 1 sent");
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const [page] = await h.chrome.browser.pages();
      page.on("request", (r) => r.url().endsWith("/form/") && order.push("form requested"));
      await released;
      order.push("report 1 done");
    },
  });
  expect(run.outcome).toMatchObject({ kind: "completed", success: true, steps: 3 });
  expect(order).toEqual(["report 1 sent", "model asked for step 2", "report 1 done", "form requested"]);
});

test("a failed step report ends the task with its error before the next action", async () => {
  const requested: string[] = [];
  h.llm.script("report-fails", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/shop/` }),
    toolCallReply("go_to_url", { url: `${h.sites.url}/form/` }),
    toolCallReply("done", { success: true, text: "never" }),
  ]);
  const run = h.run("report-fails", "Shop, then the form.", {
    onStep: async (step) => {
      const [page] = await h.chrome.browser.pages();
      page.on("request", (r) => requested.push(new URL(r.url()).pathname));
      if (step.step === 1) throw new Error("the sessions service is unavailable");
    },
  });
  await expect(run).rejects.toThrow("the sessions service is unavailable");
  expect(requested).not.toContain("/form/");
});

test("model errors are retried with backoff, and a 429's Retry-After is waited out", async () => {
  let firstAt = 0;
  let retriedAt = 0;
  h.llm.script("retry", [
    () => {
      firstAt = Date.now();
      return httpError(429, { headers: { "retry-after-ms": "400" } });
    },
    httpError(503),
    () => {
      retriedAt = Date.now();
      return toolCallReply("done", { success: true, text: "after retries" });
    },
  ]);
  const run = await h.run("retry", "Anything.");
  expect(run.outcome).toMatchObject({ kind: "completed", success: true, output: "after retries", steps: 1 });
  expect(h.llm.requests("retry")).toHaveLength(3);
  // Never sooner than the server asked for.
  expect(retriedAt - firstAt).toBeGreaterThanOrEqual(400);
});

test("tabs, select_option and go_back: the model sees every open tab and works in the one it chose", async () => {
  h.llm.script("tabs", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/shop/search` }),
    (req) =>
      toolCallsReply([
        { name: "select_option", arguments: { index: indexOf(req, /<select label="Category"/), option: "Phones" } },
        { name: "click", arguments: { index: indexOf(req, /<button>Apply filters</) } },
      ]),
    toolCallReply("open_tab", { url: `${h.sites.url}/login/` }),
    toolCallReply("switch_tab", { tab_id: 1 }),
    toolCallReply("go_back", {}),
    toolCallReply("close_tab", { tab_id: 2 }),
    toolCallReply("done", { success: true, text: "ok" }),
  ]);
  const run = await h.run("tabs", "Look at phones.");
  expect(run.outcome).toMatchObject({ success: true, steps: 7 });
  const prompts = h.llm.requests("tabs").map(promptText);
  expect(prompts[2]).toContain("Pixelon 8 Mini Phone");
  expect(prompts[2]).not.toContain("Aurora 14 Laptop");
  expect(prompts[3]).toMatch(/\[1\] [^\n]*\/shop\/search\?q=&category=phones[\s\S]*\[2\] \(current\) Sign in/);
  expect(prompts[4]).toContain(`Current URL: ${h.sites.url}/shop/search?q=&category=phones`);
  expect(prompts[5]).toContain(`Current URL: ${h.sites.url}/shop/search`);
  expect(prompts[5]).toContain("Aurora 14 Laptop");
  const tabsOf = (prompt: string) => prompt.split("Open tabs:")[1].split("Scroll:")[0];
  expect(tabsOf(prompts[6])).not.toContain("[2]");
  expect(tabsOf(prompts[5])).toContain("[2]");
});

test("a slow single-page app: the agent waits for its API before it looks again", async () => {
  h.llm.script("spa", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/spa/` }),
    (req) => toolCallReply("click", { index: indexOf(req, /^<a[^>]*>Items<\/a>$/) }),
    toolCallReply("done", { success: true, text: "ok" }),
  ]);
  await h.run("spa", "List the items.");
  const prompts = h.llm.requests("spa").map(promptText);
  expect(prompts[1]).toContain("5 items available.");
  expect(prompts[2]).toContain("Purple Blender");
  expect(prompts[2]).not.toContain("Loading…");
});

test("the 5,000-element page is capped around the viewport, and scrolling shows what comes next", async () => {
  h.llm.script("big", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/big/` }),
    toolCallReply("scroll", { direction: "down", pages: 20 }),
    (req) => toolCallReply("click", { index: indexOf(req, /<button>Select item/) }),
    // The status line is at the top of the page.
    toolCallReply("scroll", { direction: "up", pages: 20 }),
    toolCallReply("done", { success: true, text: "ok" }),
  ]);
  await h.run("big", "Select an item further down.");
  const prompts = h.llm.requests("big").map(promptText);
  const first = prompts[1];
  expect(first.length).toBeLessThan(60_000);
  expect(first).toMatch(/\.\.\. \d+ lines below not shown/);
  expect(first).toContain("<button>Select item 1</button>");
  const later = prompts[2];
  expect(later).toMatch(/\.\.\. \d+ lines above not shown/);
  expect(later).not.toContain("<button>Select item 1</button>");
  const chosen = Number(/<button>Select item (\d+)</.exec(later.split("lines above not shown")[1])?.[1]);
  expect(chosen).toBeGreaterThan(100);
  expect(prompts[4]).toContain(`Selected item ${chosen}`);
});

test("a link that opens a new tab: the agent follows it into the new tab", async () => {
  const html = `<a href="${h.sites.url}/shop/cart" target="_blank">Open the cart elsewhere</a>`;
  h.llm.script("popup", [
    toolCallReply("go_to_url", { url: `data:text/html,${encodeURIComponent(html)}` }),
    (req) => toolCallReply("click", { index: indexOf(req, />Open the cart elsewhere</) }),
    toolCallReply("done", { success: true, text: "ok" }),
  ]);
  const run = await h.run("popup", "Open the cart.");
  expect(run.steps[1].messages.find((m) => m.type === "browser_action_result")?.data).toMatch(
    /opened a new tab \[\d+\]; it is now the current tab/,
  );
  expect(promptText(h.llm.requests("popup")[2])).toContain(`Current URL: ${h.sites.url}/shop/cart`);
});

test("a model that takes images gets the viewport screenshot with each step", async () => {
  h.llm.script("vision", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/shop/` }),
    toolCallReply("done", { success: true, text: "ok" }),
  ]);
  const run = await h.run("vision", "Look.", { vision: true });
  expect(run.outcome).toMatchObject({ success: true });
  const content = h.llm.requests("vision")[1].body.messages[1].content;
  expect(content[0]).toMatchObject({ type: "text" });
  expect(content[1].type).toBe("image_url");
  const jpeg = Buffer.from(content[1].image_url.url.replace("data:image/jpeg;base64,", ""), "base64");
  expect(jpeg.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
});
