import puppeteer, { type Browser, type KeyInput } from "puppeteer-core";
import type { Action } from "../../domain/actions";
import { type PageSnapshot, renderSnapshot } from "../../domain/page-state";
import { expandSecrets, secretKeysIn, UnknownSecretError } from "../../domain/secrets";
import type { ActOptions, ActResult, BrowserDriver, TraceEntry } from "../../app/browser-driver";
import { BrowserTabs, type Tab } from "./browser-tabs";
import { ActionError, clickElement, resolveElement, selectOption, selectorOf, typeInto } from "./element-actions";
import { observeFrames } from "./observe-frames";
import { normalizeKeys } from "./keys";

export interface CdpDriverOptions {
  navigationTimeoutMs?: number;
  /** Upper bound of waiting for the network to settle after an action. */
  settleMaxMs?: number;
}

const SCREENSHOT_TIMEOUT_MS = 5_000;
const BLOCKED_SCHEMES = /^(file|chrome|chrome-extension|devtools|view-source|javascript):/i;

function normalizeUrl(raw: string): string {
  const url = raw.trim();
  if (BLOCKED_SCHEMES.test(url))
    throw new ActionError(`URLs with the scheme of ${JSON.stringify(url.slice(0, 40))} are not allowed.`);
  if (/^[a-z][a-z0-9+.-]*:/i.test(url)) return url;
  return `https://${url}`;
}

/**
 * How long an action's effects may take to begin (a click's form submit, a key's navigation) before the page counts
 * as settled when nothing started; typing and scrolling rarely start anything, so they wait less.
 */
function graceFor(action: Action["name"]): number {
  return action === "click" || action === "send_keys" || action === "select_option" ? 30 : 10;
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

/** The agent's hands and eyes on one Chromium, over CDP with puppeteer-core. */
export class CdpBrowserDriver implements BrowserDriver {
  private constructor(
    private readonly browser: Browser,
    private readonly tabs: BrowserTabs,
    private readonly options: Required<CdpDriverOptions>,
  ) {}

  static async connect(browserWSEndpoint: string, options: CdpDriverOptions = {}): Promise<CdpBrowserDriver> {
    const browser = await puppeteer.connect({ browserWSEndpoint, defaultViewport: null, protocolTimeout: 60_000 });
    return CdpBrowserDriver.attach(browser, options);
  }

  /** Over a browser someone else connected (tests, code mode). */
  static async attach(browser: Browser, options: CdpDriverOptions = {}): Promise<CdpBrowserDriver> {
    const tabs = await BrowserTabs.attach(browser);
    return new CdpBrowserDriver(browser, tabs, { navigationTimeoutMs: 30_000, settleMaxMs: 5_000, ...options });
  }

  async observe(options: { maxChars: number; screenshot: boolean }): Promise<PageSnapshot> {
    const tab = await this.tabs.ensureOne();
    const [frames, tabs, screenshot] = await Promise.all([
      observeFrames(tab.page, tab.ids, options.maxChars),
      this.tabs.list(),
      options.screenshot ? this.screenshot() : undefined,
    ]);
    tab.elementFrames = frames.elementFrames;
    return {
      url: frames.url,
      title: frames.title,
      tabs,
      activeTabId: tab.id,
      scroll: frames.scroll,
      lines: frames.lines,
      omittedAbove: frames.omittedAbove,
      omittedBelow: frames.omittedBelow,
      elements: frames.elements,
      ...(screenshot ? { screenshot } : {}),
    };
  }

  async screenshot(): Promise<Uint8Array | undefined> {
    const tab = await this.tabs.ensureOne();
    let timer: NodeJS.Timeout | undefined;
    // A page that produces no frame (crashed renderer, a dialog) must not hold the step up.
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), SCREENSHOT_TIMEOUT_MS);
    });
    const shot = tab.page
      .screenshot({ type: "jpeg", quality: 60, optimizeForSpeed: true, captureBeyondViewport: false })
      .catch(() => undefined);
    try {
      return await Promise.race([shot, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async pageContent(maxChars: number): Promise<{ url: string; text: string }> {
    const tab = await this.tabs.ensureOne();
    // A separate id space would shift indexes the model knows; reuse the tab's, they are stable anyway.
    const frames = await observeFrames(tab.page, tab.ids, maxChars);
    tab.elementFrames = new Map([...tab.elementFrames, ...frames.elementFrames]);
    const snapshot: PageSnapshot = { ...frames, tabs: [], activeTabId: tab.id };
    return { url: frames.url, text: renderSnapshot(snapshot, maxChars) };
  }

  async act(action: Exclude<Action, { name: "done" | "extract" }>, options: ActOptions): Promise<ActResult> {
    const tab = await this.tabs.ensureOne();
    const url = tab.page.url();
    const result = await this.run(tab, action, options);
    if (action.name !== "wait" && action.name !== "open_tab" && this.tabs.active.id === tab.id) {
      await tab.activity.settle({ maxMs: this.options.settleMaxMs, graceMs: graceFor(action.name) }, options.signal);
    }
    // A tab the page opened may be announced after the page settled (a busy machine): if the page asked for one,
    // wait for it rather than miss it.
    const asked = await tab.page
      .evaluate(() => {
        const w = window as unknown as { __basOpens?: number };
        const n = w.__basOpens ?? 0;
        w.__basOpens = 0;
        return n;
      })
      .catch(() => 0);
    if (asked > 0) await this.tabs.waitForOpened(this.options.settleMaxMs);
    const opened = await this.tabs.takeOpened();
    if (opened.length > 0 && action.name !== "open_tab") {
      const newest = await this.tabs.switchTo(opened.at(-1)!.id);
      if (result.trace) result.trace.openedTabId = newest.id;
      await newest.activity.settle({ maxMs: this.options.settleMaxMs }, options.signal);
      result.result += ` The page opened a new tab [${newest.id}]; it is now the current tab.`;
      result.pageChanged = true;
    } else if (this.tabs.active.page.url() !== url || this.tabs.active.id !== tab.id) {
      result.pageChanged = true;
    }
    if (result.trace) {
      result.trace.url = url;
      result.trace.tabId = action.name === "open_tab" ? this.tabs.activeTabId : tab.id;
    }
    return result;
  }

  private async run(
    tab: Tab,
    action: Exclude<Action, { name: "done" | "extract" }>,
    options: ActOptions,
  ): Promise<ActResult> {
    const page = tab.page;
    const timeout = this.options.navigationTimeoutMs;
    const traced = (extra: Partial<TraceEntry> = {}): TraceEntry | undefined =>
      options.trace ? ({ action, url: "", tabId: tab.id, ...extra } as TraceEntry) : undefined;
    const done = (result: string, extra?: Partial<TraceEntry>, pageChanged = false): ActResult => ({
      result,
      pageChanged,
      ...(options.trace ? { trace: traced(extra) } : {}),
    });
    const element = async (index: number) => {
      const handle = await resolveElement(tab, index);
      const frame = tab.elementFrames.get(index);
      const extra: Partial<TraceEntry> = options.trace
        ? { selector: await selectorOf(handle).catch(() => undefined) }
        : {};
      if (options.trace && frame && frame !== page.mainFrame()) extra.frameUrl = frame.url();
      return { handle, extra };
    };

    switch (action.name) {
      case "go_to_url": {
        const target = normalizeUrl(action.url);
        const response = await page.goto(target, { waitUntil: "domcontentloaded", timeout }).catch((err: Error) => {
          throw new ActionError(`Could not open ${target}: ${explainNetError(err.message.split("\n")[0])}`);
        });
        // browser-pool's egress proxy names why it refused a destination (loopback, private, link-local, ...).
        const blocked = response?.headers()[EGRESS_BLOCKED_HEADER];
        if (blocked) throw new ActionError(`Could not open ${target}: ${blocked}`);
        const status = response?.status();
        return done(`Opened ${page.url()}${status && status >= 400 ? ` (HTTP ${status})` : ""}`, {}, true);
      }
      case "click": {
        const { handle, extra } = await element(action.index);
        try {
          await clickElement(handle);
        } finally {
          await handle.dispose().catch(() => undefined);
        }
        return done(`Clicked element ${action.index}.`, extra);
      }
      case "input_text": {
        let text: string;
        try {
          text = expandSecrets(action.text, options.secrets);
        } catch (err) {
          if (err instanceof UnknownSecretError)
            throw new ActionError(
              `${err.message}. Known secret keys: ${Object.keys(options.secrets).join(", ") || "none"}.`,
            );
          throw err;
        }
        const secret = secretKeysIn(action.text).length > 0;
        const { handle, extra } = await element(action.index);
        try {
          await typeInto(page, handle, text, action.clear, secret);
        } finally {
          await handle.dispose().catch(() => undefined);
        }
        return done(`Typed '${action.text}' into element ${action.index}.`, extra);
      }
      case "select_option": {
        const { handle, extra } = await element(action.index);
        try {
          const chosen = await selectOption(handle, action.option);
          return done(`Selected '${chosen}' in element ${action.index}.`, extra);
        } finally {
          await handle.dispose().catch(() => undefined);
        }
      }
      case "send_keys": {
        for (const combo of normalizeKeys(action.keys)) {
          if (combo.text !== undefined) {
            await page.keyboard.type(combo.text);
            continue;
          }
          for (const m of combo.modifiers) await page.keyboard.down(m as KeyInput);
          await page.keyboard.press(combo.key as KeyInput).catch((err: Error) => {
            throw new ActionError(`Unknown key "${combo.key}" (${err.message}).`);
          });
          for (const m of [...combo.modifiers].reverse()) await page.keyboard.up(m as KeyInput);
        }
        return done(`Pressed ${action.keys}.`);
      }
      case "scroll": {
        const sign = action.direction === "down" ? 1 : -1;
        if (action.index) {
          const { handle, extra } = await element(action.index);
          try {
            const moved = await handle.evaluate(
              (el, s, n) => {
                const before = el.scrollTop;
                el.scrollBy(0, s * n * (el.clientHeight || 400));
                return el.scrollTop - before;
              },
              sign,
              action.pages,
            );
            return done(
              moved === 0
                ? `Element ${action.index} cannot scroll further ${action.direction}.`
                : `Scrolled element ${action.index} ${action.direction}.`,
              extra,
            );
          } finally {
            await handle.dispose().catch(() => undefined);
          }
        }
        const at = await page.evaluate(
          (s, n) => {
            window.scrollBy(0, s * n * window.innerHeight);
            return { y: window.scrollY, h: window.innerHeight, total: document.documentElement.scrollHeight };
          },
          sign,
          action.pages,
        );
        const below = Math.max(0, (at.total - at.y - at.h) / at.h);
        return done(
          `Scrolled ${action.direction}; now ${(at.y / at.h).toFixed(1)} pages from the top, ${below.toFixed(1)} pages below.`,
        );
      }
      case "go_back": {
        const before = page.url();
        const response = await page.goBack({ waitUntil: "domcontentloaded", timeout }).catch((err: Error) => {
          throw new ActionError(`Could not go back: ${err.message.split("\n")[0]}`);
        });
        // goBack resolves null both without history and for same-document navigations; only the URL tells them apart.
        if (!response && page.url() === before) throw new ActionError("There is no previous page in this tab.");
        return done(`Went back to ${page.url()}.`, {}, true);
      }
      case "open_tab": {
        const target = normalizeUrl(action.url);
        const opened = await this.tabs.open();
        await opened.page.goto(target, { waitUntil: "domcontentloaded", timeout }).catch((err: Error) => {
          throw new ActionError(`Opened tab ${opened.id} but could not load ${target}: ${err.message.split("\n")[0]}`);
        });
        await opened.activity.settle({ maxMs: this.options.settleMaxMs }, options.signal);
        return done(`Opened tab ${opened.id} with ${opened.page.url()}; it is the current tab.`, {}, true);
      }
      case "switch_tab": {
        if (!this.tabs.get(action.tabId))
          throw new ActionError(`There is no tab ${action.tabId}. Open tabs are listed in the page state.`);
        await this.tabs.switchTo(action.tabId);
        return done(`Switched to tab ${action.tabId} (${this.tabs.active.page.url()}).`, {}, true);
      }
      case "close_tab": {
        if (!this.tabs.get(action.tabId)) throw new ActionError(`There is no tab ${action.tabId}.`);
        await this.tabs.close(action.tabId);
        return done(`Closed tab ${action.tabId}; the current tab is ${this.tabs.activeTabId}.`, {}, true);
      }
      case "wait": {
        await sleep(action.seconds * 1000, options.signal);
        await tab.activity.settle({ maxMs: this.options.settleMaxMs }, options.signal);
        return done(`Waited ${action.seconds} s.`);
      }
    }
  }

  isConnected(): boolean {
    return this.browser.connected;
  }

  async disconnect(): Promise<void> {
    this.tabs.detach();
    await this.browser.disconnect().catch(() => undefined);
  }
}

/** Set by browser-pool's egress proxy on the 403 it answers for a destination its policy closes. */
const EGRESS_BLOCKED_HEADER = "x-egress-blocked";

/** An HTTPS destination the egress proxy refused shows only as a failed tunnel: say what that usually means. */
function explainNetError(message: string): string {
  if (!message.includes("ERR_TUNNEL_CONNECTION_FAILED")) return message;
  return `${message} (the browser's egress policy refuses loopback, private and link-local destinations, or the site is unreachable)`;
}
