import puppeteer, { type Browser } from "puppeteer-core";
import { type PageSnapshot, renderSnapshot } from "../../domain/page-state";
import type { ActOptions, ActResult, BrowserDriver, InputFile, TraceEntry } from "../../app/browser-driver";
import { BrowserTabs, type Tab } from "./browser-tabs";
import { type ActedAction, type ActionContext, handleAction } from "./action-handlers";
import { fillFileInput, resolveElement, selectorOf } from "./element-actions";
import { observeFrames } from "./observe-frames";

export interface CdpDriverOptions {
  navigationTimeoutMs?: number;
  /** Upper bound of waiting for the network to settle after an action. */
  settleMaxMs?: number;
}

const SCREENSHOT_TIMEOUT_MS = 5_000;
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
      observeFrames(tab.page, tab.indices, options.maxChars),
      this.tabs.list(),
      options.screenshot ? this.screenshot() : undefined,
    ]);
    tab.elementRefs = frames.elementRefs;
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
    const frames = await observeFrames(tab.page, tab.indices, maxChars);
    tab.elementRefs = new Map([...tab.elementRefs, ...frames.elementRefs]);
    const snapshot: PageSnapshot = { ...frames, tabs: [], activeTabId: tab.id };
    return { url: frames.url, text: renderSnapshot(snapshot, maxChars) };
  }

  async act(action: ActedAction, options: ActOptions): Promise<ActResult> {
    const tab = await this.tabs.ensureOne();
    const url = tab.page.url();
    const result = await this.run(tab, action, options);
    if (action.name !== "wait" && action.name !== "open_tab" && this.tabs.active.id === tab.id) {
      await tab.activity.settle({ maxMs: this.options.settleMaxMs }, options.signal);
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
    // A download the page started, in this tab or in one it opened (a download that comes later is told next step).
    const current = this.tabs.active;
    const downloads = [...tab.downloads.take(), ...(current !== tab ? current.downloads.take() : [])];
    if (downloads.length > 0) {
      const names = downloads.map((name) => JSON.stringify(name)).join(", ");
      result.result += ` The page started downloading ${names}; the browser's downloads keep the file${downloads.length > 1 ? "s" : ""}.`;
    }
    if (result.trace) {
      result.trace.url = url;
      result.trace.tabId = action.name === "open_tab" ? this.tabs.activeTabId : tab.id;
    }
    return result;
  }

  private run(tab: Tab, action: ActedAction, options: ActOptions): Promise<ActResult> {
    const page = tab.page;
    const traced = (extra: Partial<TraceEntry> = {}): TraceEntry | undefined =>
      options.trace ? ({ action, url: "", tabId: tab.id, ...extra } as TraceEntry) : undefined;
    const context: ActionContext = {
      tab,
      tabs: this.tabs,
      options,
      navigationTimeoutMs: this.options.navigationTimeoutMs,
      settleMaxMs: this.options.settleMaxMs,
      done: (result, extra, pageChanged = false) => ({
        result,
        pageChanged,
        ...(options.trace ? { trace: traced(extra) } : {}),
      }),
      async element(index) {
        const handle = await resolveElement(tab, index);
        const frame = tab.elementRefs.get(index)?.frame;
        const extra: Partial<TraceEntry> = options.trace
          ? { selector: await selectorOf(handle).catch(() => undefined) }
          : {};
        if (options.trace && frame && frame !== page.mainFrame()) extra.frameUrl = frame.url();
        return { handle, extra };
      },
    };
    return handleAction(context, action);
  }

  async setInputFile(index: number, file: InputFile): Promise<string> {
    const tab = await this.tabs.ensureOne();
    const element = await resolveElement(tab, index);
    try {
      return await fillFileInput(element, index, file);
    } finally {
      await element.dispose().catch(() => undefined);
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
