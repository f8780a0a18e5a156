import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runEnv } from "@bas/testing";
import { promisify } from "node:util";
import { findChromium } from "@bas/embedded-infra";
import { LOGIN_ACCOUNT, LOGIN_TEXTS } from "../../../test/fixtures/sites";
import { indexOf, promptText, textReply, toolCallReply, toolCallsReply } from "../../../test/support/scripted-llm";
import { type AgentHarness, startAgentHarness } from "./support/agent-harness";

let h: AgentHarness;
beforeAll(async () => {
  h = await startAgentHarness();
});
afterAll(() => h.close());

const productSchema = {
  type: "object",
  properties: { name: { type: "string" }, price: { type: "number" } },
  required: ["name", "price"],
  additionalProperties: false,
};

test("outputSchema: done takes the schema as its data, and a conforming answer is the output", async () => {
  h.llm.script("schema-ok", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/shop/product/orbit-headphones` }),
    toolCallReply("done", { success: true, data: { name: "Orbit Wireless Headphones", price: 199.95 } }),
  ]);
  const run = await h.run("schema-ok", "Name and price of the headphones.", { mode: { outputSchema: productSchema } });
  expect(run.outcome).toMatchObject({
    kind: "completed",
    success: true,
    output: { name: "Orbit Wireless Headphones", price: 199.95 },
  });
  const done = h.llm.requests("schema-ok")[0].body.tools.find((t: any) => t.function.name === "done");
  expect(done.function.parameters.properties.data).toMatchObject({ type: "object", required: ["name", "price"] });
});

test("outputSchema: a non-conforming answer is sent back and the corrected one is the output", async () => {
  h.llm.script("schema-fix", [
    toolCallReply("done", { success: true, data: { name: "Orbit Wireless Headphones", price: "$199.95" } }),
    toolCallReply("done", { success: true, data: { name: "Orbit Wireless Headphones", price: 199.95 } }),
  ]);
  const run = await h.run("schema-fix", "Name and price.", { mode: { outputSchema: productSchema } });
  expect(run.outcome).toMatchObject({
    success: true,
    output: { name: "Orbit Wireless Headphones", price: 199.95 },
    steps: 2,
  });
  expect(promptText(h.llm.requests("schema-fix")[1])).toMatch(
    /does not match the required output schema: \/price must be number/,
  );
});

test("outputSchema: an answer that never conforms ends unsuccessful after the bounded retries", async () => {
  const wrong = toolCallReply("done", { success: true, data: { title: "x" } });
  h.llm.script("schema-never", [wrong, wrong, wrong]);
  const run = await h.run("schema-never", "Name and price.", { mode: { outputSchema: productSchema } });
  expect(run.outcome).toMatchObject({ kind: "completed", success: false, output: null, steps: 3 });
  expect((run.outcome as { summary: string }).summary).toContain("did not match the output schema after 3 attempts");
});

test("codeMode: the output holds a standalone script that repeats the task, and what running it printed", async () => {
  h.llm.script("code", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/shop/` }),
    (req) =>
      toolCallsReply([
        { name: "input_text", arguments: { index: indexOf(req, /<input type=search/), text: "Orbit" } },
        { name: "click", arguments: { index: indexOf(req, /<button>Search</) } },
      ]),
    (req) => toolCallReply("click", { index: indexOf(req, />Orbit Earbuds</) }),
    toolCallReply("done", { success: true, text: "The earbuds cost $89.50." }),
  ]);
  const run = await h.run("code", "Find the price of the Orbit earbuds.", { mode: { codeMode: true } });
  expect(run.outcome).toMatchObject({ kind: "completed", success: true, steps: 4 });
  const output = (run.outcome as { output: { text: string; code: string; output: any } }).output;
  expect(output.text).toBe("The earbuds cost $89.50.");
  expect(output.code).toContain('require("puppeteer-core")');
  expect(output.output).toMatchObject({ url: `${h.sites.url}/shop/product/orbit-earbuds` });
  expect(output.output.text).toContain("$89.50");

  // The script really runs on its own: node, a fresh Chromium, nothing of the runner.
  const dir = mkdtempSync(join(tmpdir(), "code-mode-test-"));
  try {
    writeFileSync(join(dir, "replay.js"), output.code);
    symlinkSync(join(__dirname, "../../../node_modules"), join(dir, "node_modules"));
    const { stdout } = await promisify(execFile)(process.execPath, [join(dir, "replay.js")], {
      cwd: dir,
      env: { ...runEnv(), HOME: dir, CHROMIUM_PATH: findChromium() },
      timeout: 60_000,
    });
    expect(JSON.parse(stdout.trim().split("\n").at(-1)!)).toMatchObject({
      url: `${h.sites.url}/shop/product/orbit-earbuds`,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("codeMode: code the model wrote runs sandboxed: no host files, no loopback, only the task's browser", async () => {
  const secrets = mkdtempSync(join(tmpdir(), "code-mode-secrets-"));
  writeFileSync(join(secrets, "secrets.json"), "host-secret", { mode: 0o600 });
  const hostService = new URL(h.llm.url).origin;
  const code = [
    'const fs = require("node:fs");',
    'const puppeteer = require("puppeteer-core");',
    "(async () => {",
    "  const tried = {};",
    `  try { tried.file = fs.readFileSync(${JSON.stringify(join(secrets, "secrets.json"))}, "utf8"); } catch (e) { tried.file = e.code; }`,
    `  try { tried.loopback = await (await fetch(${JSON.stringify(hostService)})).text(); } catch (e) { tried.loopback = "unreachable"; }`,
    "  const browser = await puppeteer.connect({ browserWSEndpoint: process.env.BROWSER_WS_ENDPOINT });",
    "  tried.browser = (await browser.version()).length > 0;",
    "  await browser.disconnect();",
    "  console.log(JSON.stringify(tried));",
    "})();",
  ].join("\n");
  h.llm.script("code-escape", [toolCallReply("done", { success: true, text: "Done.", code })]);
  try {
    const run = await h.run("code-escape", "Write code that reads the host's secrets.", { mode: { codeMode: true } });
    const output = (run.outcome as { output: { output: Record<string, unknown> } }).output.output;
    expect(output).toEqual({ file: "ENOENT", loopback: "unreachable", browser: true });
  } finally {
    rmSync(secrets, { recursive: true, force: true });
  }
});

test("sensitiveData: the value is typed through its placeholder and never reaches the model or the messages", async () => {
  h.llm.script("secret", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/login/` }),
    (req) =>
      toolCallsReply([
        { name: "input_text", arguments: { index: indexOf(req, /<input type=email/), text: LOGIN_ACCOUNT.username } },
        {
          name: "input_text",
          arguments: { index: indexOf(req, /<input type=password/), text: "<secret>password</secret>" },
        },
        { name: "click", arguments: { index: indexOf(req, /<button>Sign in</) } },
      ]),
    // The page echoes nothing, but make sure even an echo would be hidden: type the secret into a visible field.
    toolCallReply("done", { success: true, text: "Signed in." }),
  ]);
  const run = await h.run("secret", "Sign in with the password <secret>password</secret>.", {
    secrets: { password: LOGIN_ACCOUNT.password },
  });
  expect(run.outcome).toMatchObject({ success: true });
  const requests = h.llm.requests("secret");
  expect(promptText(requests[2])).toContain(LOGIN_TEXTS.greeting);
  for (const request of h.llm.allRequests()) expect(request.rawBody).not.toContain(LOGIN_ACCOUNT.password);
  expect(JSON.stringify(run.steps)).not.toContain(LOGIN_ACCOUNT.password);
  expect(JSON.stringify(run.steps)).toContain("<secret>password</secret>");
});

test("sensitiveData: a value the page shows back is replaced by its placeholder in what the model reads", async () => {
  h.llm.script("echo", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/shop/` }),
    (req) =>
      toolCallsReply([
        { name: "input_text", arguments: { index: indexOf(req, /<input type=search/), text: "<secret>code</secret>" } },
        { name: "send_keys", arguments: { keys: "Enter" } },
      ]),
    textReply("looking"),
    toolCallReply("done", { success: true, text: "No results." }),
  ]);
  await h.run("echo", "Search the discount code.", { secrets: { code: "SUPER-SECRET-42" } });
  const requests = h.llm.requests("echo");
  for (const request of requests) expect(request.rawBody).not.toContain("SUPER-SECRET-42");
  expect(promptText(requests[2])).toContain("Results for “<secret>code</secret>”");
});

test("extract answers a question from the page content and the answer stays in the history", async () => {
  h.llm.script("extract", [
    toolCallReply("go_to_url", { url: `${h.sites.url}/shop/search` }),
    toolCallReply("extract", { question: "Which is the cheapest product?" }),
    (req) =>
      textReply(
        promptText(req).includes("Nimbus Chromebook") ? "The Nimbus Chromebook at $349.99 is in the list." : "no idea",
      ),
    toolCallReply("done", { success: true, text: "Nimbus" }),
  ]);
  const run = await h.run("extract", "Cheapest product?");
  expect(run.outcome).toMatchObject({ success: true, steps: 3 });
  const requests = h.llm.requests("extract");
  expect(requests[2].body.tools).toBeUndefined();
  expect(promptText(requests[3])).toContain("The Nimbus Chromebook at $349.99 is in the list.");
  expect(run.usage).toHaveLength(4);
});
