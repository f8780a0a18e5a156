import puppeteer from "puppeteer-core";

/**
 * Connects to a browser's DevTools endpoint with puppeteer-core, asks for its version and leaves it running.
 * `targetFilter` keeps puppeteer from attaching to the browser's pages: the probe must not disturb them.
 */
export async function probeDevtools(devtoolsUrl: string, timeoutMs = 5_000): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const connecting = puppeteer.connect({
    browserWSEndpoint: devtoolsUrl,
    targetFilter: () => false,
    protocolTimeout: timeoutMs,
    defaultViewport: null,
  });
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`DevTools at ${devtoolsUrl} did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    const browser = await Promise.race([connecting, timeout]);
    try {
      return await browser.version();
    } finally {
      await browser.disconnect();
    }
  } catch (err) {
    // A connection that opens after the timeout must not stay open.
    connecting.then((b) => b.disconnect()).catch(() => undefined);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
