import type { Launched, Launcher } from "../app/ports";
import type { BrowserDriver, LaunchSpec, RunningBrowser } from "../domain/browser-driver";
import type { BrowserHandle } from "../domain/events";
import type { BrowserSettings } from "../domain/browser-settings";
import type { EgressPolicy } from "@bas/egress-policy";
import { type NetworkProxy, type ResolveHost, startNetworkProxy, upstreamFor } from "./network-proxy/network-proxy";

export interface LauncherOptions {
  driver: BrowserDriver;
  /** Upstream proxy URL template with `{country}`; unset = the proxy goes out directly. */
  proxyUpstreamTemplate?: string;
  /** What every browser may reach; its egress proxy enforces it. */
  egressPolicy: EgressPolicy;
  /** Host name resolution for the egress proxies (tests map names of their own). */
  resolve?: ResolveHost;
}

/** Every browser comes with its own egress proxy, started before it and closed with it. */
export function createLauncher(options: LauncherOptions): Launcher {
  const { driver } = options;

  /** Every browser gets an egress proxy; it chains to the upstream only when the browser asked for a country. */
  function startProxy(settings: BrowserSettings, id: string, handle?: BrowserHandle) {
    const country = settings.proxyCountryCode;
    return driver.egressAddress(id, handle).then((listen) =>
      startNetworkProxy({
        listen,
        upstreamUrl: country === null ? null : upstreamFor(options.proxyUpstreamTemplate, country),
        policy: options.egressPolicy,
        resolve: options.resolve,
      }),
    );
  }

  function launched(id: string, running: RunningBrowser, networkProxy: NetworkProxy, settings: BrowserSettings) {
    let disposing: Promise<void> | undefined;
    const browser: Launched = {
      id,
      running,
      networkProxy,
      metered: settings.proxyCountryCode !== null,
      dispose: () => {
        disposing ??= Promise.allSettled([running.kill(), networkProxy.close()]).then(() => undefined);
        return disposing;
      },
    };
    return browser;
  }

  return {
    async launch(
      id: string,
      settings: BrowserSettings,
      prepareProfile?: LaunchSpec["prepareProfile"],
    ): Promise<Launched> {
      const networkProxy = await startProxy(settings, id);
      try {
        const running = await driver.launch({
          browserId: id,
          screenWidth: settings.screenWidth,
          screenHeight: settings.screenHeight,
          egress: networkProxy.address,
          prepareProfile,
        });
        return launched(id, running, networkProxy, settings);
      } catch (err) {
        await networkProxy.close();
        throw err;
      }
    },

    /**
     * Takes over a browser an earlier run of this node launched. Its proxy is opened again where the browser was
     * told to find it; if that is taken the browser cannot reach the network any more, so it is ended.
     */
    async adopt(id: string, handle: BrowserHandle, settings: BrowserSettings): Promise<Launched | undefined> {
      const running = await driver.adopt(id, handle);
      if (!running) return undefined;
      try {
        return launched(id, running, await startProxy(settings, id, handle), settings);
      } catch {
        await running.kill();
        return undefined;
      }
    },
  };
}
