import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findChromium } from "@bas/embedded-infra";
import puppeteer, { type Browser } from "puppeteer-core";

/** The flags a headless Chromium needs on a closed network, as root. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
];

export interface TestChromium {
  browser: Browser;
  wsEndpoint: string;
  /** Closes the browser and deletes its profile. */
  close(): Promise<void>;
}

/**
 * A fresh headless Chromium with its own profile (and its own XDG dirs, so nothing lands in $HOME), for tests and
 * benchmarks that drive a browser directly rather than through browser-pool.
 */
export async function launchTestChromium(size = { width: 1280, height: 800 }): Promise<TestChromium> {
  const dir = await mkdtemp(join(tmpdir(), "bas-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: findChromium(),
    headless: true,
    userDataDir: join(dir, "profile"),
    defaultViewport: null,
    args: [...CHROMIUM_ARGS, `--window-size=${size.width},${size.height}`],
    env: { ...process.env, XDG_CONFIG_HOME: join(dir, "config"), XDG_CACHE_HOME: join(dir, "cache") },
  });
  return {
    browser,
    wsEndpoint: browser.wsEndpoint(),
    async close() {
      await browser.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
