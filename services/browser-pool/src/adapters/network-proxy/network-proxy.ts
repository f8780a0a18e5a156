import { chmod, rm } from "node:fs/promises";
import type { LookupAddress } from "node:dns";
import { lookup as systemLookup } from "node:dns/promises";
import { createServer, isIP, type Server } from "node:net";
import type { EgressAddress } from "../../domain/browser-driver";
import { domainRefusal, type EgressPolicy } from "@bas/egress-policy";

/**
 * A browser's only way out to the network: a forward proxy that refuses hosts outside the browser's allowedDomains,
 * resolves each destination itself, refuses what the egress policy closes (so a DNS name or a redirect that leads to
 * loopback is refused too), connects to exactly the address it checked, and counts every byte.
 */
export interface NetworkProxy {
  /** Where it listens: a Unix socket (local browsers, bridged into their network namespace) or a TCP port. */
  readonly address: EgressAddress;
  /** Bytes between the browser and the proxy, both directions, since the proxy started. */
  bytes(): number;
  /** Goes out this way from the next connection on (a warm browser fitted to a request when handed out). */
  reroute(route: { upstreamUrl: string | null; allowedDomains: readonly string[] | null }): void;
  close(): Promise<void>;
}

/** Resolves a host name to every address it has (the system resolver unless a test hands in its own). */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

export interface NetworkProxyOptions {
  /** A socket path, or a host and port (0 = any free port; a restart passes the old port so an adopted browser's
   * `--proxy-server` keeps working). */
  listen: EgressAddress;
  /** Upstream proxy to chain to (e.g. a residential proxy for the country), or null to go direct. */
  upstreamUrl: string | null;
  policy: EgressPolicy;
  resolve?: ResolveHost;
  /** The browser's `allowedDomains`: the only hosts it may reach (null or absent = no limit). */
  allowedDomains?: readonly string[] | null;
}

/** The header of a refusal that names its reason (the runner reports it to the model as the action's error). */
export const EGRESS_BLOCKED_HEADER = "x-egress-blocked";

/** proxy-chain is ESM-only; a dynamic import loads it from this CommonJS code (tsx and jest alike). */
const loadProxyChain = () => import("proxy-chain");

export const resolveWithSystem: ResolveHost = (hostname) => systemLookup(hostname, { all: true, verbatim: true });

/**
 * The one address a connection to `hostname:port` may use, or the policy's reason to refuse it. Every address the
 * name has must be open: otherwise a name with one public and one loopback address would reach loopback whenever the
 * connection picked the second.
 */
export async function checkedAddress(
  hostname: string,
  port: number,
  policy: EgressPolicy,
  resolve: ResolveHost = resolveWithSystem,
): Promise<LookupAddress | { refused: string } | { unresolved: string }> {
  const host = hostname.replace(/^\[|\]$/g, "");
  const family = isIP(host);
  let candidates: LookupAddress[];
  if (family !== 0) candidates = [{ address: host, family }];
  else {
    try {
      candidates = await resolve(host);
    } catch {
      return { unresolved: `Could not resolve ${host}` };
    }
  }
  for (const candidate of candidates) {
    const why = policy.refusal(candidate.address, port);
    if (why) return { refused: why };
  }
  return candidates[0] ?? { unresolved: `Could not resolve ${host}` };
}

export async function startNetworkProxy(options: NetworkProxyOptions): Promise<NetworkProxy> {
  const { Server, RequestError } = await loadProxyChain();
  let closedBytes = 0;
  let route = { upstreamUrl: options.upstreamUrl, allowedDomains: options.allowedDomains ?? null };

  /** The one address this request may connect to, or a 403 that says why not. */
  async function destination(hostname: string, port: number): Promise<LookupAddress> {
    // The browser's own limit comes first: a host outside it is refused before its name is even resolved.
    const outside = domainRefusal(hostname, route.allowedDomains);
    if (outside) throw new RequestError(outside, 403, { [EGRESS_BLOCKED_HEADER]: outside });
    const checked = await checkedAddress(hostname, port, options.policy, options.resolve);
    if ("refused" in checked) {
      const reason = `Blocked by the browser egress policy: ${hostname.replace(/^\[|\]$/g, "")}:${port}: ${checked.refused}`;
      throw new RequestError(reason, 403, { [EGRESS_BLOCKED_HEADER]: reason });
    }
    if ("unresolved" in checked) throw new RequestError(checked.unresolved, 502);
    return checked;
  }

  const server = new Server({
    port: 0,
    async prepareRequestFunction({ hostname, port }) {
      const pinned = await destination(hostname, port);
      // Through an upstream, proxy-chain would use the lookup for the upstream's own name: the upstream reaches the
      // destination, and a custom upstream's address is checked and pinned when the browser starts.
      if (route.upstreamUrl) return { upstreamProxyUrl: route.upstreamUrl };
      return {
        upstreamProxyUrl: null,
        // Connect to the checked address, never to whatever a second lookup would answer (DNS rebinding).
        dnsLookup: ((_host: string, lookupOptions: { all?: boolean }, callback: PinnedCallback) => {
          if (lookupOptions?.all) callback(null, [pinned]);
          else callback(null, pinned.address, pinned.family);
        }) as never,
      };
    },
  });
  server.on("connectionClosed", ({ stats }: { stats?: { srcTxBytes: number; srcRxBytes: number } }) => {
    if (stats) closedBytes += stats.srcTxBytes + stats.srcRxBytes;
  });
  const { address, close: stopListening } = await listen(server.server, options.listen);
  let closed = false;
  return {
    address,
    bytes() {
      let open = 0;
      for (const id of server.getConnectionIds()) {
        const stats = server.getConnectionStats(id);
        if (stats) open += stats.srcTxBytes + stats.srcRxBytes;
      }
      return closedBytes + open;
    },
    reroute(next) {
      route = { upstreamUrl: next.upstreamUrl, allowedDomains: next.allowedDomains };
    },
    async close() {
      if (closed) return;
      closed = true;
      stopListening();
      if ("path" in address) {
        // On a Unix socket the proxy's own HTTP server never listens (connections are handed to it), and closing it
        // would fail: only its connections are closed.
        server.closeConnections();
        await rm(address.path, { force: true });
      } else await server.close(true);
    },
  };
}

type PinnedCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;

async function listen(server: Server, where: EgressAddress): Promise<{ address: EgressAddress; close(): void }> {
  if ("path" in where) {
    // A socket left by a browser-pool that died would make listen fail; only its own path is removed.
    await rm(where.path, { force: true });
    // proxy-chain drops connections without a remote address, which Unix sockets never have: each one is handed to
    // its HTTP server named for where it comes from.
    const sockets = createServer((socket) => {
      Object.defineProperty(socket, "remoteAddress", { value: "browser-sandbox" });
      server.emit("connection", socket);
    });
    await listening(sockets, () => sockets.listen(where.path));
    // Open to whoever reaches the socket: the driver's folder around it decides who does (a local sandbox's bridge
    // runs as this service's user, a browser container's as the image's).
    await chmod(where.path, 0o666);
    return { address: where, close: () => sockets.close() };
  }
  await listening(server, () => server.listen(where.port, where.host));
  const { port } = server.address() as { port: number };
  return { address: { host: where.host, port }, close: () => undefined };
}

function listening(server: Server, listen: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.once("listening", () => {
      server.off("error", reject);
      resolve();
    });
    listen();
  });
}

/** Fills `{country}` in an upstream proxy URL template. */
export function upstreamFor(template: string | undefined, country: string): string | null {
  if (!template) return null;
  return template.replaceAll("{country}", encodeURIComponent(country));
}
