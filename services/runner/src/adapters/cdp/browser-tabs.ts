import type { Browser, Page, Target } from "puppeteer-core";
import type { TabInfo } from "../../domain/page-state";
import { type ElementRef, TabIndices } from "./observe-frames";
import { PAGE_ACTIVITY_HOOK, type PageActivity, trackPageActivity } from "./page-activity";
import { type PageDownloads, watchPageDownloads } from "./page-downloads";

/**
 * Marks elements that get click listeners, so the serializer can list them as interactive; and counts the page's
 * attempts to open a tab (window.open, a link with a target), so the driver knows to wait for the new tab to appear.
 */
const CLICK_LISTENER_HOOK = `(() => {
  if (window.__basHooked) return;
  Object.defineProperty(window, "__basHooked", { value: true });
  Object.defineProperty(window, "__basOpens", { value: 0, writable: true });
  const open = window.open;
  window.open = function (...args) { window.__basOpens++; return open.apply(this, args); };
  document.addEventListener("click", (e) => {
    const link = e.target instanceof Element ? e.target.closest("a[href][target]") : null;
    if (link && !["", "_self", "_parent", "_top"].includes(link.target)) window.__basOpens++;
  }, true);
  const original = EventTarget.prototype.addEventListener;
  const clicky = new Set(["click", "mousedown", "pointerdown", "mouseup", "pointerup"]);
  EventTarget.prototype.addEventListener = function (type, ...rest) {
    if (clicky.has(type) && this instanceof Element && this !== document.body && this !== document.documentElement) {
      try { Object.defineProperty(this, "__basClick", { value: true, configurable: true }); } catch {}
    }
    return original.call(this, type, ...rest);
  };
})();`;

/** Everything the driver runs in each document before the page's own scripts. */
const PAGE_HOOKS = `${CLICK_LISTENER_HOOK}\n${PAGE_ACTIVITY_HOOK}`;

export interface Tab {
  id: number;
  page: Page;
  activity: PageActivity;
  downloads: PageDownloads;
  indices: TabIndices;
  /** From the last observation: where each element index lives. */
  elementRefs: Map<number, ElementRef>;
}

/** The open tabs of a browser with small stable ids, the current one, and tabs the page opened by itself. */
export class BrowserTabs {
  private readonly tabs = new Map<number, Tab>();
  private nextTabId = 1;
  private activeId = 0;
  /** Tabs that appeared without the agent asking (target=_blank, window.open), newest last. */
  private opened: number[] = [];
  /** Tabs being registered right now (a target appeared; its page is not attached yet). */
  private readonly adding = new Set<Promise<unknown>>();
  private readonly onTarget = (target: Target) => {
    if (target.type() !== "page") return;
    const adding = target
      .page()
      .then((page) => page && this.add(page).then((tab) => this.opened.push(tab.id)))
      .catch(() => undefined)
      .finally(() => this.adding.delete(adding));
    this.adding.add(adding);
  };

  private constructor(readonly browser: Browser) {}

  static async attach(browser: Browser): Promise<BrowserTabs> {
    const tabs = new BrowserTabs(browser);
    const pages = await browser.pages();
    for (const page of pages) await tabs.add(page);
    if (tabs.tabs.size === 0) await tabs.add(await browser.newPage());
    tabs.activeId = [...tabs.tabs.keys()].at(-1)!;
    browser.on("targetcreated", tabs.onTarget);
    return tabs;
  }

  private async add(page: Page): Promise<Tab> {
    const existing = [...this.tabs.values()].find((t) => t.page === page);
    if (existing) return existing;
    const tab: Tab = {
      id: this.nextTabId++,
      page,
      activity: trackPageActivity(page),
      downloads: watchPageDownloads(page),
      indices: new TabIndices(),
      elementRefs: new Map(),
    };
    this.tabs.set(tab.id, tab);
    page.once("close", () => this.forget(tab.id));
    await page.evaluateOnNewDocument(PAGE_HOOKS).catch(() => undefined);
    await page.evaluate(PAGE_HOOKS).catch(() => undefined);
    return tab;
  }

  private forget(id: number) {
    this.tabs.get(id)?.activity.dispose();
    this.tabs.get(id)?.downloads.dispose();
    this.tabs.delete(id);
    if (this.activeId === id) this.activeId = [...this.tabs.keys()].at(-1) ?? 0;
  }

  get active(): Tab {
    const tab = this.tabs.get(this.activeId);
    if (!tab) throw new Error("no open tab");
    return tab;
  }

  get(id: number): Tab | undefined {
    return this.tabs.get(id);
  }

  /** Makes sure a tab is open (the page or the model may have closed them all). */
  async ensureOne(): Promise<Tab> {
    if (this.tabs.size === 0) this.activeId = (await this.add(await this.browser.newPage())).id;
    return this.active;
  }

  async open(): Promise<Tab> {
    const tab = await this.add(await this.browser.newPage());
    this.opened = this.opened.filter((id) => id !== tab.id);
    this.activeId = tab.id;
    return tab;
  }

  async switchTo(id: number): Promise<Tab> {
    const tab = this.tabs.get(id);
    if (!tab) throw new Error(`no tab ${id}`);
    this.activeId = id;
    await tab.page.bringToFront().catch(() => undefined);
    return tab;
  }

  async close(id: number): Promise<void> {
    const tab = this.tabs.get(id);
    if (!tab) throw new Error(`no tab ${id}`);
    await tab.page.close();
    this.forget(id);
    await this.ensureOne();
  }

  /** Tabs the page opened since the last call; the agent follows the newest one. */
  /** The page asked for a new tab: wait (bounded) until its target has shown up. */
  async waitForOpened(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.opened.length === 0 && this.adding.size === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async takeOpened(): Promise<Tab[]> {
    await Promise.all([...this.adding]);
    const opened = this.opened.map((id) => this.tabs.get(id)).filter((t): t is Tab => !!t);
    this.opened = [];
    return opened;
  }

  async list(): Promise<TabInfo[]> {
    return Promise.all(
      [...this.tabs.values()].map(async (t) => ({
        id: t.id,
        url: t.page.url(),
        title: await Promise.race([t.page.title(), new Promise<string>((r) => setTimeout(() => r(""), 500))]).catch(
          () => "",
        ),
      })),
    );
  }

  get activeTabId(): number {
    return this.activeId;
  }

  detach(): void {
    this.browser.off("targetcreated", this.onTarget);
    for (const tab of this.tabs.values()) {
      tab.activity.dispose();
      tab.downloads.dispose();
    }
  }
}
