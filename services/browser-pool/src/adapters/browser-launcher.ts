import type { LaunchExtras, Launched, Launcher } from "../app/ports";
import type { BrowserDriver, RunningBrowser } from "../domain/browser-driver";
import type { BrowserHandle } from "../domain/events";
import {
  type BrowserSettings,
  type CustomProxy,
  type ProxyCredentials,
  sameWindow,
  WARM_SETTINGS,
  windowOf,
} from "../domain/browser-settings";
import type { EgressPolicy } from "@bas/egress-policy";
import { InvalidArgumentError } from "@bas/errors";
import { openWindows } from "./cdp/window-size";
import {
  checkedAddress,
  type NetworkProxy,
  type ResolveHost,
  startNetworkProxy,
  upstreamFor,
} from "./network-proxy/network-proxy";

export interface LauncherOptions {
  driver: BrowserDriver;
  /** Upstream proxy URL template with `{country}`; unset = the proxy goes out directly. */
  proxyUpstreamTemplate?: string;
  /** What every browser may reach; its egress proxy enforces it. */
  egressPolicy: EgressPolicy;
  /** Host name resolution for the egress proxies (tests map names of their own). */
  resolve?: ResolveHost;
}

const noop = () => undefined;

/** Every browser comes with its own egress proxy, started before it and closed with it. */
export function createLauncher(options: LauncherOptions): Launcher {
  const { driver } = options;

  /**
   * A caller's proxy is a destination like any other: its address must pass the egress policy (else a tenant could
   * point it at our own services), and the browser's egress proxy connects to exactly the address checked.
   */
  async function customUpstream(proxy: CustomProxy, credentials: ProxyCredentials | undefined): Promise<string> {
    const checked = await checkedAddress(proxy.host, proxy.port, options.egressPolicy, options.resolve);
    const field = { field: ["body", "customProxy", "host"] };
    if ("refused" in checked) {
      throw new InvalidArgumentError(`customProxy is closed by the browser egress policy: ${checked.refused}`, field);
    }
    if ("unresolved" in checked) throw new InvalidArgumentError(`customProxy: ${checked.unresolved}`, field);
    const url = new URL("http://proxy.invalid");
    url.hostname = checked.family === 6 ? `[${checked.address}]` : checked.address;
    url.port = String(proxy.port);
    if (credentials?.username) url.username = encodeURIComponent(credentials.username);
    if (credentials?.password) url.password = encodeURIComponent(credentials.password);
    return url.href;
  }

  /**
   * How a browser's egress proxy goes out: through the caller's own proxy, a country's upstream, or direct; and the
   * domains it may reach (a browser recorded before allowedDomains existed, adopted after a restart, has no limit).
   */
  async function routeFor(settings: BrowserSettings, credentials: ProxyCredentials | undefined) {
    const country = settings.proxyCountryCode;
    const upstreamUrl = settings.customProxy
      ? await customUpstream(settings.customProxy, credentials)
      : country === null
        ? null
        : upstreamFor(options.proxyUpstreamTemplate, country);
    return { upstreamUrl, allowedDomains: settings.allowedDomains ?? null };
  }

  /** Every browser gets an egress proxy of its own. */
  async function startProxy(
    settings: BrowserSettings,
    id: string,
    credentials?: ProxyCredentials,
    handle?: BrowserHandle,
  ) {
    const route = await routeFor(settings, credentials);
    const listen = await driver.egressAddress(id, handle);
    return startNetworkProxy({ listen, ...route, policy: options.egressPolicy, resolve: options.resolve });
  }

  function launched(id: string, running: RunningBrowser, networkProxy: NetworkProxy, settings: BrowserSettings) {
    let disposing: Promise<void> | undefined;
    const browser: Launched = {
      id,
      running,
      networkProxy,
      metered: settings.proxyCountryCode !== null,
      window: windowOf(settings),
      dispose: () => {
        void browser.windows?.then((windows) => windows.close(), noop);
        disposing ??= Promise.allSettled([running.kill(), networkProxy.close()]).then(() => undefined);
        return disposing;
      },
    };
    return browser;
  }

  async function launch(id: string, settings: BrowserSettings, extras: LaunchExtras = {}): Promise<Launched> {
    const networkProxy = await startProxy(settings, id, extras.proxyCredentials);
    try {
      const running = await driver.launch({
        browserId: id,
        screenWidth: settings.screenWidth,
        screenHeight: settings.screenHeight,
        egress: networkProxy.address,
        prepareProfile: extras.prepareProfile,
        ignoreCertificateErrors: settings.customProxy?.ignoreCertErrors ?? false,
      });
      return launched(id, running, networkProxy, settings);
    } catch (err) {
      await networkProxy.close();
      throw err;
    }
  }

  return {
    async reroute(browser, settings, extras = {}) {
      browser.networkProxy.reroute(await routeFor(settings, extras.proxyCredentials));
      browser.metered = settings.proxyCountryCode !== null;
    },

    async resize(browser, settings) {
      // The connection looked up ahead is not kept: from now on the browser is its caller's alone.
      const ahead = await browser.windows?.catch(() => undefined);
      browser.windows = undefined;
      const window = windowOf(settings);
      if (sameWindow(window, browser.window)) {
        ahead?.close();
        return;
      }
      const windows = ahead ?? (await openWindows(browser.running.handle));
      try {
        await windows.resize(window.width, window.height);
        browser.window = window;
      } finally {
        windows.close();
      }
    },

    async launchWarm(id, window) {
      const browser = await launch(id, { ...WARM_SETTINGS, screenWidth: window.width, screenHeight: window.height });
      browser.windows = openWindows(browser.running.handle);
      // A lookup that failed is done again when the browser is fitted; it must not be an unhandled rejection now.
      browser.windows.catch(noop);
      return browser;
    },

    checkCustomProxy: async (proxy) => {
      await customUpstream(proxy, undefined);
    },

    launch,

    /**
     * Takes over a browser an earlier run of this node launched. Its proxy is opened again where the browser was
     * told to find it; if that is taken the browser cannot reach the network any more, so it is ended.
     */
    async adopt(id: string, handle: BrowserHandle, settings: BrowserSettings): Promise<Launched | undefined> {
      const running = await driver.adopt(id, handle);
      if (!running) return undefined;
      try {
        return launched(id, running, await startProxy(settings, id, undefined, handle), settings);
      } catch {
        await running.kill();
        return undefined;
      }
    },
  };
}
