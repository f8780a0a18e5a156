import { type NetworkProxy, startNetworkProxy, upstreamFor } from "../adapters/network-proxy/network-proxy";
import type { BrowserDriver, RunningBrowser } from "../domain/browser-driver";
import type { BrowserHandle } from "../domain/browser-events";
import type { BrowserSettings } from "../domain/browser-settings";

/** A browser with its network proxy: what the pool hands out and tears down as one. */
export interface Launched {
  id: string;
  running: RunningBrowser;
  networkProxy: NetworkProxy | null;
  /** Ends the browser and closes its proxy. Safe to call twice. */
  dispose(): Promise<void>;
}

export interface LauncherOptions {
  driver: BrowserDriver;
  /** Where network proxies listen (loopback for local browsers, the pod network for Kubernetes ones). */
  proxyHost: string;
  /** Upstream proxy URL template with `{country}`; unset = the proxy goes out directly. */
  proxyUpstreamTemplate?: string;
}

export function createLauncher(options: LauncherOptions) {
  const { driver } = options;

  function startProxy(country: string | null, port: number) {
    if (country === null) return Promise.resolve(null);
    return startNetworkProxy({
      host: options.proxyHost,
      port,
      upstreamUrl: upstreamFor(options.proxyUpstreamTemplate, country),
    });
  }

  function launched(id: string, running: RunningBrowser, networkProxy: NetworkProxy | null): Launched {
    let disposing: Promise<void> | undefined;
    return {
      id,
      running,
      networkProxy,
      dispose: () => {
        disposing ??= Promise.allSettled([running.kill(), networkProxy?.close()]).then(() => undefined);
        return disposing;
      },
    };
  }

  return {
    async launch(id: string, settings: BrowserSettings): Promise<Launched> {
      const networkProxy = await startProxy(settings.proxyCountryCode, 0);
      try {
        const running = await driver.launch({
          browserId: id,
          screenWidth: settings.screenWidth,
          screenHeight: settings.screenHeight,
          proxyPort: networkProxy?.port ?? null,
        });
        return launched(id, running, networkProxy);
      } catch (err) {
        await networkProxy?.close();
        throw err;
      }
    },

    /**
     * Takes over a browser an earlier run of this node launched. Its proxy is opened again on the port the browser
     * was started with; if that port is taken the browser cannot reach the network any more, so it is ended.
     */
    async adopt(id: string, handle: BrowserHandle, settings: BrowserSettings): Promise<Launched | undefined> {
      const running = await driver.adopt(id, handle);
      if (!running) return undefined;
      try {
        const networkProxy =
          handle.proxyPort === null ? null : await startProxy(settings.proxyCountryCode, handle.proxyPort);
        return launched(id, running, networkProxy);
      } catch {
        await running.kill();
        return undefined;
      }
    },
  };
}

export type Launcher = ReturnType<typeof createLauncher>;
