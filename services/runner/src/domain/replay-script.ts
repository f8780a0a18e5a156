import type { BrowserAction } from "./actions";
import { secretKeysIn } from "./secrets";

/** One executed action as code mode replays it: what was done, where, and on which element. */
export interface TraceEntry {
  action: Exclude<BrowserAction, { name: "extract" }>;
  /** URL of the page when the action ran. */
  url: string;
  /** The tab the action ran in (for open_tab: the tab it opened). */
  tabId: number;
  /** A tab the page opened by itself during the action (target=_blank). */
  openedTabId?: number;
  /** CSS selector of the element acted on (crosses shadow roots with `>>>`). */
  selector?: string;
  /** URL of the iframe holding the element, when it was not in the main frame. */
  frameUrl?: string;
}

/** Environment variable a replay script reads a secret from. */
export const secretEnvName = (key: string) => `SECRET_${key.replace(/[^A-Za-z0-9_]/g, "_").toUpperCase()}`;

const js = (value: unknown) => JSON.stringify(value);

function textExpression(text: string): string {
  const keys = secretKeysIn(text);
  if (keys.length === 0) return js(text);
  // Secrets stay out of the script: it reads them from the environment.
  const parts = text.split(/<secret>\s*[^<]*?\s*<\/secret>/);
  const pieces: string[] = [];
  parts.forEach((part, i) => {
    if (part) pieces.push(js(part));
    if (i < keys.length) pieces.push(`(process.env.${secretEnvName(keys[i])} ?? "")`);
  });
  return pieces.join(" + ");
}

function target(entry: TraceEntry): string {
  const scope = entry.frameUrl ? `(page.frames().find((f) => f.url() === ${js(entry.frameUrl)}) ?? page)` : "page";
  return `${scope}.locator(${js(entry.selector ?? "body")})`;
}

function statement(entry: TraceEntry): string[] {
  const a = entry.action;
  const onTab = `page = await tab(${entry.tabId});`;
  switch (a.name) {
    case "go_to_url":
      return [
        onTab,
        `await page.goto(${js(/^[a-z][a-z0-9+.-]*:/i.test(a.url) ? a.url : `https://${a.url}`)}, { waitUntil: "domcontentloaded" });`,
        "await settle(page);",
      ];
    case "click":
      if (entry.openedTabId) {
        return [
          onTab,
          "{",
          '  const opened = new Promise((resolve) => browser.once("targetcreated", (t) => resolve(t.page())));',
          `  await ${target(entry)}.click();`,
          `  tabs.set(${entry.openedTabId}, await opened);`,
          "}",
          `page = await tab(${entry.openedTabId});`,
          "await settle(page);",
        ];
      }
      return [onTab, `await ${target(entry)}.click();`, "await settle(page);"];
    case "input_text":
      if (a.clear) return [onTab, `await ${target(entry)}.fill(${textExpression(a.text)});`];
      return [
        onTab,
        `await (await ${target(entry)}.waitHandle()).focus();`,
        `await page.keyboard.type(${textExpression(a.text)});`,
      ];
    case "select_option":
      return [
        onTab,
        `await (await ${target(entry)}.waitHandle()).evaluate((el, option) => {`,
        "  const o = Array.from(el.options).find((x) => x.text.trim() === option || x.value === option);",
        '  if (!o) throw new Error("no option " + option);',
        "  el.value = o.value;",
        '  el.dispatchEvent(new Event("input", { bubbles: true }));',
        '  el.dispatchEvent(new Event("change", { bubbles: true }));',
        `}, ${js(a.option)});`,
        "await settle(page);",
      ];
    case "send_keys":
      return [
        onTab,
        ...a.keys
          .trim()
          .split(/\s+/)
          .map((k) => `await pressKeys(page, ${js(k)});`),
        "await settle(page);",
      ];
    case "scroll":
      return [
        onTab,
        `await page.evaluate(() => window.scrollBy(0, ${a.direction === "down" ? "" : "-"}${a.pages} * window.innerHeight));`,
      ];
    case "go_back":
      return [onTab, `await page.goBack({ waitUntil: "domcontentloaded" });`, "await settle(page);"];
    case "open_tab":
      return [onTab, `await page.goto(${js(a.url)}, { waitUntil: "domcontentloaded" });`, "await settle(page);"];
    case "switch_tab":
      return [`page = await tab(${a.tabId});`, "await page.bringToFront();"];
    case "close_tab":
      return [
        `await (await tab(${a.tabId})).close();`,
        `tabs.delete(${a.tabId});`,
        "page = [...tabs.values()].at(-1) ?? (await tab(0));",
      ];
    case "wait":
      return [`await new Promise((resolve) => setTimeout(resolve, ${Math.round(a.seconds * 1000)}));`];
  }
}

/**
 * A standalone Node.js script (CommonJS, puppeteer-core) that repeats the agent's actions without a model and prints
 * what the last page shows as JSON `{url, title, text}`. It launches its own Chromium (CHROMIUM_PATH) or connects to
 * BROWSER_WS_ENDPOINT; secrets come from SECRET_<KEY> environment variables.
 */
export function replayScript(task: string, entries: readonly TraceEntry[]): string {
  const body: string[] = [];
  const first = entries[0];
  if (first && first.action.name !== "go_to_url" && first.action.name !== "open_tab" && /^https?:/.test(first.url)) {
    body.push(
      `page = await tab(${first.tabId});`,
      `await page.goto(${js(first.url)}, { waitUntil: "domcontentloaded" });`,
      "await settle(page);",
    );
  }
  for (const entry of entries) body.push(...statement(entry));
  const secrets = [
    ...new Set(entries.flatMap((e) => (e.action.name === "input_text" ? secretKeysIn(e.action.text) : []))),
  ];
  const header = [
    `// Repeats this browser task without a model: ${task.replace(/\s+/g, " ").slice(0, 200)}`,
    "// Generated by the browser agent from the actions it took. Run with: node <file>",
    "// CHROMIUM_PATH picks the browser to launch (default /usr/bin/chromium); BROWSER_WS_ENDPOINT connects to a running one.",
    ...(secrets.length ? [`// Secrets are read from the environment: ${secrets.map(secretEnvName).join(", ")}`] : []),
    "// Prints the final page as JSON: {url, title, text}.",
  ];
  const lines = [
    ...header,
    '"use strict";',
    'const puppeteer = require("puppeteer-core");',
    "",
    "// Quiet network, then the document parsed to its end: a page whose response is in may still be parsing (its body",
    "// not there yet) when a busy machine has left the renderer behind.",
    "async function settle(page) {",
    "  await page.waitForNetworkIdle({ idleTime: 250, timeout: 10_000 }).catch(() => undefined);",
    '  await page.waitForFunction(() => document.readyState !== "loading", { polling: 50, timeout: 10_000 }).catch(() => undefined);',
    "}",
    "",
    "async function pressKeys(page, combo) {",
    '  const keys = combo.split("+").map((k) => ({ ctrl: "Control", cmd: "Meta", esc: "Escape", return: "Enter" })[k.toLowerCase()] ?? k);',
    "  const key = keys.pop();",
    "  for (const m of keys) await page.keyboard.down(m);",
    "  await page.keyboard.press(key);",
    "  for (const m of keys.reverse()) await page.keyboard.up(m);",
    "}",
    "",
    "async function main() {",
    "  const endpoint = process.env.BROWSER_WS_ENDPOINT;",
    "  const browser = endpoint",
    "    ? await puppeteer.connect({ browserWSEndpoint: endpoint, defaultViewport: null })",
    "    : await puppeteer.launch({",
    '        executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",',
    "        headless: true,",
    '        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],',
    "      });",
    "  // A browser of its own, or a fresh context (no cookies, no tabs of anyone else's) in the one it was given.",
    "  const context = endpoint ? await browser.createBrowserContext() : browser.defaultBrowserContext();",
    "  const tabs = new Map();",
    "  const tab = async (id) => {",
    "    if (!tabs.has(id)) tabs.set(id, await context.newPage());",
    "    return tabs.get(id);",
    "  };",
    "  let page;",
    "  try {",
    ...body.map((l) => `    ${l}`),
    "    page = page ?? (await tab(0));",
    "    const result = await page.evaluate(() => ({",
    "      url: location.href,",
    "      title: document.title,",
    '      text: (document.body?.innerText ?? "").replace(/\\n{3,}/g, "\\n\\n").trim().slice(0, 5000),',
    "    }));",
    "    console.log(JSON.stringify(result));",
    "  } finally {",
    "    if (endpoint) await context.close().finally(() => browser.disconnect());",
    "    else await browser.close();",
    "  }",
    "}",
    "",
    "main().catch((err) => {",
    "  console.error(err);",
    "  process.exit(1);",
    "});",
    "",
  ];
  return lines.join("\n");
}
