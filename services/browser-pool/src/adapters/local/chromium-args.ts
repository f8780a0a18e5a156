export interface ChromiumArgsOptions {
  userDataDir: string;
  screenWidth: number;
  screenHeight: number;
  /** http://host:port of the browser's network proxy, or null for a direct connection. */
  proxyServer: string | null;
  /** Chromium's sandbox cannot start as root; outside root it stays on. */
  noSandbox: boolean;
  extraArgs?: readonly string[];
}

/**
 * Flags for a headless Chromium on a closed network: DevTools on loopback with a port the kernel picks, nothing that
 * phones home or waits for a first-run UI, and a profile of its own.
 */
export function chromiumArgs(options: ChromiumArgsOptions): string[] {
  return [
    "--headless",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    `--user-data-dir=${options.userDataDir}`,
    `--window-size=${options.screenWidth},${options.screenHeight}`,
    ...(options.noSandbox ? ["--no-sandbox"] : []),
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--disable-breakpad",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider",
    "--metrics-recording-only",
    "--no-first-run",
    "--no-default-browser-check",
    "--password-store=basic",
    "--use-mock-keychain",
    ...(options.proxyServer
      ? // Without <-loopback> Chromium would bypass the proxy for loopback, and its traffic would go uncounted.
        [`--proxy-server=${options.proxyServer}`, "--proxy-bypass-list=<-loopback>"]
      : []),
    ...(options.extraArgs ?? []),
    "about:blank",
  ];
}
