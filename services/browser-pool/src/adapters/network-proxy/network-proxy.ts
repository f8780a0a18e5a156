/** A browser's own forward proxy: every byte the browser sends or receives over the network passes and is counted. */
export interface NetworkProxy {
  readonly port: number;
  /** Bytes between the browser and the proxy, both directions, since the proxy started. */
  bytes(): number;
  close(): Promise<void>;
}

export interface NetworkProxyOptions {
  host: string;
  /** 0 = any free port; a restart passes the old port so an adopted browser's `--proxy-server` keeps working. */
  port: number;
  /** Upstream proxy to chain to (e.g. a residential proxy for the country), or null to go direct. */
  upstreamUrl: string | null;
}

/** proxy-chain is ESM-only; a dynamic import loads it from this CommonJS code (tsx and jest alike). */
const loadProxyChain = () => import("proxy-chain");

export async function startNetworkProxy(options: NetworkProxyOptions): Promise<NetworkProxy> {
  const { Server } = await loadProxyChain();
  let closedBytes = 0;
  const server = new Server({
    host: options.host,
    port: options.port,
    prepareRequestFunction: () => ({ upstreamProxyUrl: options.upstreamUrl }),
  });
  server.on("connectionClosed", ({ stats }: { stats?: { srcTxBytes: number; srcRxBytes: number } }) => {
    if (stats) closedBytes += stats.srcTxBytes + stats.srcRxBytes;
  });
  await server.listen();
  let closed = false;
  return {
    port: server.port,
    bytes() {
      let open = 0;
      for (const id of server.getConnectionIds()) {
        const stats = server.getConnectionStats(id);
        if (stats) open += stats.srcTxBytes + stats.srcRxBytes;
      }
      return closedBytes + open;
    },
    async close() {
      if (closed) return;
      closed = true;
      await server.close(true);
    },
  };
}

/** Fills `{country}` in an upstream proxy URL template. */
export function upstreamFor(template: string | undefined, country: string): string | null {
  if (!template) return null;
  return template.replaceAll("{country}", encodeURIComponent(country));
}
