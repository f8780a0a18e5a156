import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_SCREEN, sameWindow, type WindowSize } from "../domain/browser-settings";
import type { Launched } from "./ports";

export interface WarmPoolDeps {
  size: number;
  /** Launches one browser with the warm settings at the given window size, with the given id. */
  launch(id: string, window: WindowSize): Promise<Launched>;
  newId(): string;
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void };
  /** Pause after a failed launch, so a broken Chromium does not spin the CPU. */
  retryDelayMs?: number;
  /**
   * How long the refill waits after the last idle browser is taken. By then its hand-out (recording it, the answer,
   * the caller's first CDP connection) is over; a launch at once competes with it for the CPU: on 2 cores, a warm
   * acquisition's p50 went from ~43 to ~25 ms (bench/browsers.ts (a)).
   */
  refillDelayMs?: number;
  /**
   * How long it waits while idle browsers remain for the next callers: a launch takes half a second of CPU, and the
   * caller's first page (opened, loaded) falls in that second. On 2 cores the lifecycle's p50 went from 206–235 to
   * 169–190 ms (bench/browsers.ts (b)). A take that empties the pool brings the refill forward.
   */
  spareRefillDelayMs?: number;
}

/**
 * Launched, idle browsers waiting for a caller. `take()` is synchronous, so one browser can never go to two callers;
 * a taken browser leaves the pool for good and a new one is launched in the background, one at a time so the
 * refill never competes with callers for the CPU more than one launch's worth.
 *
 * The refill launches at the window sizes callers asked for last, so a caller that always asks for the same size
 * gets a browser that has it: resizing one when it is handed out takes Chromium's UI thread 8-12 ms, about a third
 * of a warm acquisition.
 */
export function createWarmPool(deps: WarmPoolDeps) {
  const idle: Launched[] = [];
  /** The sizes the next launches take: those of the latest `size` requests, oldest first. */
  const wanted: WindowSize[] = [];
  /** Browsers that went away by themselves, idle or taken. */
  const exited = new WeakSet<Launched>();
  let launching: Promise<void> | undefined;
  let closed = false;
  const closing = new AbortController();

  function refill(): Promise<void> {
    if (closed) return Promise.resolve();
    launching ??= fill().finally(() => {
      launching = undefined;
    });
    return launching;
  }

  async function fill(): Promise<void> {
    while (!closed && idle.length < deps.size) {
      const id = deps.newId();
      // Before any caller has asked for a size: the default screen, as WARM_SETTINGS has it.
      const window = wanted.shift() ?? DEFAULT_SCREEN;
      try {
        const browser = await deps.launch(id, window);
        if (closed) {
          await browser.dispose();
          return;
        }
        browser.running.onExit((detail) => {
          exited.add(browser);
          const at = idle.indexOf(browser);
          if (at < 0) return;
          idle.splice(at, 1);
          deps.log.warn({ browserId: id, detail }, "warm browser died while idle; replacing it");
          want(browser.window);
          void browser.dispose();
          void refill();
        });
        idle.push(browser);
      } catch (err) {
        deps.log.warn({ err }, "warm browser launch failed");
        await sleep(deps.retryDelayMs ?? 5_000, undefined, { signal: closing.signal }).catch(() => undefined);
      }
    }
  }

  function want(window: WindowSize): void {
    wanted.push(window);
    if (wanted.length > deps.size) wanted.shift();
  }

  return {
    /** Fills the pool in the background. */
    start() {
      void refill();
    },
    /** An idle browser, now the caller's alone, or undefined when none is ready: one of that size if there is. */
    take(window: WindowSize): Launched | undefined {
      want(window);
      const sameSize = idle.findIndex((b) => sameWindow(b.window, window));
      const [browser] = idle.splice(Math.max(sameSize, 0), 1);
      const delay = idle.length > 0 ? (deps.spareRefillDelayMs ?? 1_000) : (deps.refillDelayMs ?? 100);
      setTimeout(() => void refill(), delay).unref();
      return browser;
    },
    /**
     * A browser taken for a request that was refused before it was used (the project's limit on other nodes): idle
     * again, first in line. Nobody else has seen it, so it is as fresh as before.
     */
    putBack(browser: Launched): void {
      if (closed || exited.has(browser)) {
        void browser.dispose();
        void refill();
        return;
      }
      idle.unshift(browser);
    },
    get idle() {
      return idle.length;
    },
    /** Resolves once the pool is full (tests and benchmarks). */
    async filled(timeoutMs = 30_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (idle.length < deps.size) {
        if (Date.now() > deadline) throw new Error("warm pool did not fill in time");
        await sleep(20);
      }
    },
    /** Ids of idle browsers: they belong to this node even though no event names them yet. */
    ids(): string[] {
      return idle.map((b) => b.id);
    },
    async close(): Promise<void> {
      closed = true;
      closing.abort();
      await launching;
      const all = idle.splice(0);
      await Promise.all(all.map((b) => b.dispose()));
    },
  };
}

export type WarmPool = ReturnType<typeof createWarmPool>;
