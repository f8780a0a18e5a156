import { get } from "node:http";

/** Chromium's DevTools HTTP endpoints, re-addressed so that every URL in them leads through our proxy. */

/** Where a browser's DevTools server is: TCP (pods) or a Unix socket bridged into a local browser's sandbox. */
export interface DevtoolsAddress {
  host: string;
  port: number;
  socketPath?: string;
}

/** Where to reach a browser's DevTools endpoint `devtoolsUrl` (ws://host:port/devtools/browser/GUID) from here. */
export function devtoolsUpstream(
  devtoolsUrl: string,
  devtoolsSocket: string | undefined,
): DevtoolsAddress & { browserPath: string } {
  const url = new URL(devtoolsUrl);
  return { host: url.hostname, port: Number(url.port), socketPath: devtoolsSocket, browserPath: url.pathname };
}

export function fetchDevtoolsJson(upstream: DevtoolsAddress, path: string, timeoutMs = 5_000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const target = upstream.socketPath
      ? { socketPath: upstream.socketPath }
      : { host: upstream.host, port: upstream.port };
    const req = get(
      { ...target, path, headers: { host: `${upstream.host}:${upstream.port}` }, timeout: timeoutMs },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => {
          if (res.statusCode !== 200) return reject(new Error(`DevTools ${path} answered ${res.statusCode}`));
          try {
            resolve(JSON.parse(body));
          } catch (err) {
            reject(err);
          }
        });
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`DevTools ${path} did not answer within ${timeoutMs} ms`)));
    req.on("error", reject);
  });
}

/** `/json/version` with `webSocketDebuggerUrl` pointing at the caller's CDP URL. */
export function rewriteVersion(version: unknown, cdpUrl: string): Record<string, unknown> {
  return { ...(version as Record<string, unknown>), webSocketDebuggerUrl: cdpUrl };
}

/**
 * `/json/list` with each target's WebSocket URL under the caller's CDP URL. The DevTools front-end link is dropped:
 * it names the browser's internal address.
 */
export function rewriteTargetList(list: unknown, cdpUrl: string): Array<Record<string, unknown>> {
  if (!Array.isArray(list)) return [];
  return list.map((target: Record<string, unknown>) => {
    const { devtoolsFrontendUrl: _frontend, devtoolsFrontendUrlCompat: _compat, ...rest } = target;
    const internal = typeof target.webSocketDebuggerUrl === "string" ? target.webSocketDebuggerUrl : undefined;
    if (!internal) return rest;
    return { ...rest, webSocketDebuggerUrl: `${cdpUrl}${new URL(internal).pathname}` };
  });
}
