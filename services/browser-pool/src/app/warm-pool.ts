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
  /**
   * Whether a browser can be handed out at another window size (`BrowserDriver.resizesWindows`). Where not (the
   * headless shell), a request finds only a browser of its own size.
   */
  resizes?: boolean;
}

/**
 * Launched, idle browsers waiting for a caller. `take()` is synchronous, so one browser can never go to two callers;
 * a taken browser leaves the pool for good and a new one is launched in the background, one at a time so the
 * refill never competes with callers for the CPU more than one launch's worth.
 *
 * The pool's window sizes follow what the latest requests asked for: each launch takes the size with the most
 * requests per idle browser it would have (`demand / (idle + 1)`, the highest-averages rule that shares seats among
 * parties by their votes), so a caller that always asks for the same size gets a browser that has it. Resizing one
 * when it is handed out takes Chromium's UI thread 8-12 ms, about a third of a warm acquisition; where browsers
 * cannot be resized at all, a request that finds none of its size launches cold, and takes the place of the idle
 * browser needed least when its size would win the next launch, so that the pool turns to the sizes in demand.
 */
export function createWarmPool(deps: WarmPoolDeps) {
  const idle: Launched[] = [];
  /** The sizes of the latest requests, oldest first. */
  const recent: WindowSize[] = [];
  const remembered = 4 * deps.size;
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
      const window = nextSize();
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

  const demand = (window: WindowSize) => recent.filter((w) => sameWindow(w, window)).length;
  const idleOf = (window: WindowSize) => idle.filter((b) => sameWindow(b.window, window)).length;

  /**
   * The size with the most requests per idle browser it would then have; on a tie, the one whose latest request is
   * the oldest. Before any caller has asked for a size: the default screen, as WARM_SETTINGS has it.
   */
  function nextSize(): WindowSize {
    let best: { window: WindowSize; share: number } | undefined;
    recent.forEach((window, at) => {
      if (recent.slice(at + 1).some((later) => sameWindow(later, window))) return;
      const share = demand(window) / (idleOf(window) + 1);
      if (!best || share > best.share) best = { window, share };
    });
    return best?.window ?? DEFAULT_SCREEN;
  }

  /** Where the idle browser needed least is, and its size's requests per idle browser; the first in line on a tie. */
  function leastNeeded(): { at: number; share: number } | undefined {
    let least: { at: number; share: number } | undefined;
    idle.forEach((browser, at) => {
      const share = demand(browser.window) / idleOf(browser.window);
      if (!least || share < least.share) least = { at, share };
    });
    return least;
  }

  function handOut(at: number): Launched {
    const [browser] = idle.splice(at, 1);
    const delay = idle.length > 0 ? (deps.spareRefillDelayMs ?? 1_000) : (deps.refillDelayMs ?? 100);
    setTimeout(() => void refill(), delay).unref();
    return browser;
  }

  return {
    /** Fills the pool in the background. */
    start() {
      void refill();
    },
    /**
     * An idle browser, now the caller's alone, or undefined when none is ready: one of that size if there is, else
     * the one needed least (to be resized), or none where browsers cannot be resized.
     */
    take(window: WindowSize): Launched | undefined {
      recent.push(window);
      if (recent.length > remembered) recent.shift();
      const sameSize = idle.findIndex((b) => sameWindow(b.window, window));
      if (sameSize >= 0) return handOut(sameSize);
      const least = leastNeeded();
      if (!least) return undefined;
      if (deps.resizes !== false) return handOut(least.at);
      // The caller launches cold. An idle browser makes way for its size only if that size would win the next launch.
      if (demand(window) > least.share) {
        const [retired] = idle.splice(least.at, 1);
        void retired.dispose();
        // After the caller's own launch has had the CPU.
        setTimeout(() => void refill(), deps.spareRefillDelayMs ?? 1_000).unref();
      }
      return undefined;
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
