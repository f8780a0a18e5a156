import type { ElementHandle, KeyInput } from "puppeteer-core";
import { domainRefusal } from "@bas/egress-policy/domains";
import { explainNetError, proxyFailure } from "../../domain/net-errors";
import type { ActOptions, ActResult, TraceEntry } from "../../app/browser-driver";
import type { BrowserAction } from "../../domain/actions";
import { expandSecrets, secretKeysIn, secretsRefusedOn, UnknownSecretError } from "../../domain/secrets";

const hostOf = (url: string) => {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
};
import type { BrowserTabs, Tab } from "./browser-tabs";
import { ActionError, clickElement, selectOption, typeInto } from "./element-actions";
import { normalizeKeys } from "./keys";

/** The actions that act on the browser (`done` and `extract` are the agent's own). */
export type ActedAction = Exclude<BrowserAction, { name: "extract" }>;

/** What a handler works with: the tab, the driver's tabs and limits, and how to answer. */
export interface ActionContext {
  tab: Tab;
  tabs: BrowserTabs;
  options: ActOptions;
  navigationTimeoutMs: number;
  settleMaxMs: number;
  /** The answer to the model, with the trace entry when the task is traced. */
  done(result: string, extra?: Partial<TraceEntry>, pageChanged?: boolean): ActResult;
  /** The element the model named by its index, with what the trace records of it. */
  element(index: number): Promise<{ handle: ElementHandle; extra: Partial<TraceEntry> }>;
}

type Handlers = {
  [Name in ActedAction["name"]]: (
    cx: ActionContext,
    action: Extract<ActedAction, { name: Name }>,
  ) => Promise<ActResult>;
};

/** Runs one action of the model on the tab. */
export function handleAction(cx: ActionContext, action: ActedAction): Promise<ActResult> {
  const handler = HANDLERS[action.name] as (cx: ActionContext, action: ActedAction) => Promise<ActResult>;
  return handler(cx, action);
}

/** Works on the element the model named, and lets go of its handle afterwards whatever happens. */
async function withElement(
  cx: ActionContext,
  index: number,
  use: (handle: ElementHandle, extra: Partial<TraceEntry>) => Promise<ActResult>,
): Promise<ActResult> {
  const { handle, extra } = await cx.element(index);
  try {
    return await use(handle, extra);
  } finally {
    await handle.dispose().catch(() => undefined);
  }
}

const HANDLERS: Handlers = {
  async go_to_url(cx, action) {
    const page = cx.tab.page;
    const target = normalizeUrl(action.url);
    const response = await page
      .goto(target, { waitUntil: "domcontentloaded", timeout: cx.navigationTimeoutMs })
      .catch((err: Error) => {
        // An https:// host outside allowedDomains is refused at its CONNECT, which Chromium shows only as a failed
        // tunnel: the reason is the same one the proxy gives.
        const outside = domainRefusal(hostOf(target), cx.options.allowedDomains ?? null);
        throw new ActionError(`Could not open ${target}: ${outside ?? explainNetError(err.message.split("\n")[0])}`);
      });
    // browser-pool's egress proxy names why it refused a destination (loopback, private, link-local, ...).
    const blocked = response?.headers()[EGRESS_BLOCKED_HEADER];
    if (blocked) throw new ActionError(`Could not open ${target}: ${blocked}`);
    const status = response?.status();
    const proxyProblem = status && proxyFailure(status, response!.statusText());
    if (proxyProblem) throw new ActionError(`Could not open ${target}: ${proxyProblem}`);
    return cx.done(`Opened ${page.url()}${status && status >= 400 ? ` (HTTP ${status})` : ""}`, {}, true);
  },

  click: (cx, action) =>
    withElement(cx, action.index, async (handle, extra) => {
      await clickElement(handle);
      return cx.done(`Clicked element ${action.index}.`, extra);
    }),

  async input_text(cx, action) {
    // A secret bound to some hosts is typed on those only: a page elsewhere never gets it, whatever the model asks.
    // What counts is the document that holds the field, as it is now: a frame from another host on an allowed page
    // is elsewhere.
    const host = hostOf((cx.tab.elementRefs.get(action.index)?.frame ?? cx.tab.page.mainFrame()).url());
    const refused = secretsRefusedOn(action.text, host, cx.options.secretDomains);
    if (refused.length) {
      const where = refused.map((k) => `${k}: ${cx.options.secretDomains[k].join(", ")}`).join("; ");
      throw new ActionError(
        `Secret ${refused.join(", ")} may not be typed on ${host || "this page"} (only on ${where}).`,
      );
    }
    let text: string;
    try {
      text = expandSecrets(action.text, cx.options.secrets);
    } catch (err) {
      if (err instanceof UnknownSecretError)
        throw new ActionError(
          `${err.message}. Known secret keys: ${Object.keys(cx.options.secrets).join(", ") || "none"}.`,
        );
      throw err;
    }
    const secret = secretKeysIn(action.text).length > 0;
    return withElement(cx, action.index, async (handle, extra) => {
      await typeInto(cx.tab.page, handle, text, action.clear, secret);
      return cx.done(`Typed '${action.text}' into element ${action.index}.`, extra);
    });
  },

  select_option: (cx, action) =>
    withElement(cx, action.index, async (handle, extra) => {
      const chosen = await selectOption(handle, action.option);
      return cx.done(`Selected '${chosen}' in element ${action.index}.`, extra);
    }),

  async send_keys(cx, action) {
    const keyboard = cx.tab.page.keyboard;
    for (const combo of normalizeKeys(action.keys)) {
      if (combo.text !== undefined) {
        await keyboard.type(combo.text);
        continue;
      }
      for (const m of combo.modifiers) await keyboard.down(m as KeyInput);
      await keyboard.press(combo.key as KeyInput).catch((err: Error) => {
        throw new ActionError(`Unknown key "${combo.key}" (${err.message}).`);
      });
      for (const m of [...combo.modifiers].reverse()) await keyboard.up(m as KeyInput);
    }
    return cx.done(`Pressed ${action.keys}.`);
  },

  async scroll(cx, action) {
    const sign = action.direction === "down" ? 1 : -1;
    if (action.index) {
      return withElement(cx, action.index, async (handle, extra) => {
        const moved = await handle.evaluate(
          (el, s, n) => {
            const before = el.scrollTop;
            el.scrollBy(0, s * n * (el.clientHeight || 400));
            return el.scrollTop - before;
          },
          sign,
          action.pages,
        );
        return cx.done(
          moved === 0
            ? `Element ${action.index} cannot scroll further ${action.direction}.`
            : `Scrolled element ${action.index} ${action.direction}.`,
          extra,
        );
      });
    }
    const at = await cx.tab.page.evaluate(
      (s, n) => {
        window.scrollBy(0, s * n * window.innerHeight);
        return { y: window.scrollY, h: window.innerHeight, total: document.documentElement.scrollHeight };
      },
      sign,
      action.pages,
    );
    const below = Math.max(0, (at.total - at.y - at.h) / at.h);
    return cx.done(
      `Scrolled ${action.direction}; now ${(at.y / at.h).toFixed(1)} pages from the top, ${below.toFixed(1)} pages below.`,
    );
  },

  async go_back(cx) {
    const page = cx.tab.page;
    const before = page.url();
    const response = await page
      .goBack({ waitUntil: "domcontentloaded", timeout: cx.navigationTimeoutMs })
      .catch((err: Error) => {
        throw new ActionError(`Could not go back: ${err.message.split("\n")[0]}`);
      });
    // goBack resolves null both without history and for same-document navigations; only the URL tells them apart.
    if (!response && page.url() === before) throw new ActionError("There is no previous page in this tab.");
    return cx.done(`Went back to ${page.url()}.`, {}, true);
  },

  async open_tab(cx, action) {
    const target = normalizeUrl(action.url);
    const opened = await cx.tabs.open();
    await opened.page
      .goto(target, { waitUntil: "domcontentloaded", timeout: cx.navigationTimeoutMs })
      .catch((err: Error) => {
        throw new ActionError(`Opened tab ${opened.id} but could not load ${target}: ${err.message.split("\n")[0]}`);
      });
    await opened.activity.settle({ maxMs: cx.settleMaxMs }, cx.options.signal);
    return cx.done(`Opened tab ${opened.id} with ${opened.page.url()}; it is the current tab.`, {}, true);
  },

  async switch_tab(cx, action) {
    if (!cx.tabs.get(action.tabId))
      throw new ActionError(`There is no tab ${action.tabId}. Open tabs are listed in the page state.`);
    await cx.tabs.switchTo(action.tabId);
    return cx.done(`Switched to tab ${action.tabId} (${cx.tabs.active.page.url()}).`, {}, true);
  },

  async close_tab(cx, action) {
    if (!cx.tabs.get(action.tabId)) throw new ActionError(`There is no tab ${action.tabId}.`);
    await cx.tabs.close(action.tabId);
    return cx.done(`Closed tab ${action.tabId}; the current tab is ${cx.tabs.activeTabId}.`, {}, true);
  },

  async wait(cx, action) {
    await sleep(action.seconds * 1000, cx.options.signal);
    await cx.tab.activity.settle({ maxMs: cx.settleMaxMs }, cx.options.signal);
    return cx.done(`Waited ${action.seconds} s.`);
  },
};

const BLOCKED_SCHEMES = /^(file|chrome|chrome-extension|devtools|view-source|javascript):/i;

function normalizeUrl(raw: string): string {
  const url = raw.trim();
  if (BLOCKED_SCHEMES.test(url))
    throw new ActionError(`URLs with the scheme of ${JSON.stringify(url.slice(0, 40))} are not allowed.`);
  if (/^[a-z][a-z0-9+.-]*:/i.test(url)) return url;
  return `https://${url}`;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });

/** Set by browser-pool's egress proxy on the 403 it answers for a destination its policy closes. */
const EGRESS_BLOCKED_HEADER = "x-egress-blocked";
