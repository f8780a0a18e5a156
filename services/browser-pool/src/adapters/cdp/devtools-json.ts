/** Chromium's DevTools HTTP endpoints, re-addressed so that every URL in them leads through our proxy. */

export async function fetchDevtoolsJson(upstream: { host: string; port: number }, path: string): Promise<unknown> {
  const response = await fetch(`http://${upstream.host}:${upstream.port}${path}`, {
    signal: AbortSignal.timeout(5_000),
  });
  if (!response.ok) throw new Error(`DevTools ${path} answered ${response.status}`);
  return response.json();
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
