import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The other end of a connection (a socket's `remoteAddress` and `remotePort`). */
export interface Peer {
  address: string | undefined;
  port: number | undefined;
}

export interface SocketCounts {
  /** Bytes the kernel received on the connection, from its start. */
  received: number;
  /** Bytes sent on it, each once (retransmissions left out): unlike the bytes acknowledged, not behind by a delayed ACK. */
  sent: number;
}

export type SocketCounter = ReturnType<typeof createSocketCounter>;

/**
 * What the kernel counted on accepted TCP connections that another process relayed (this one only holds them open):
 * read with `ss`, one run for every connection asked about in the same turn of the event loop. A connection `ss`
 * does not show (or `ss` failing) counts nothing.
 */
export function createSocketCounter(localPort: () => number) {
  let pending: Array<{ peer: Peer; resolve: (counts: SocketCounts) => void }> = [];

  async function flush() {
    const batch = pending;
    pending = [];
    const byPeer = await readCounts(localPort).catch(() => new Map<string, SocketCounts>());
    for (const { peer, resolve } of batch) resolve(byPeer.get(peerKey(peer)) ?? { received: 0, sent: 0 });
  }

  return {
    /** The counts of the open connection from `peer` accepted on `localPort`. */
    countsOf(peer: Peer): Promise<SocketCounts> {
      if (pending.length === 0) setImmediate(() => void flush());
      return new Promise((resolve) => pending.push({ peer, resolve }));
    },
  };
}

async function readCounts(localPort: () => number): Promise<Map<string, SocketCounts>> {
  const { stdout } = await run("ss", ["-HtinO", "state", "connected", `( sport = :${localPort()} )`]);
  const counts = new Map<string, SocketCounts>();
  for (const line of stdout.split("\n")) {
    // State, receive and send queues, local address, peer address, then the connection's figures.
    const [, , , , peer] = line.trim().split(/\s+/);
    if (!peer) continue;
    const at = peer.lastIndexOf(":");
    counts.set(peerKey({ address: peer.slice(0, at), port: Number(peer.slice(at + 1)) }), {
      received: figure(line, "bytes_received"),
      sent: figure(line, "bytes_sent") - figure(line, "bytes_retrans"),
    });
  }
  return counts;
}

/** `ss` leaves a figure out while it is zero. */
function figure(line: string, name: string): number {
  const match = new RegExp(`\\b${name}:(\\d+)`).exec(line);
  return match ? Number(match[1]) : 0;
}

/** One form for `[::ffff:127.0.0.1]`, `::ffff:127.0.0.1` and `127.0.0.1`. */
function peerKey({ address, port }: Peer): string {
  const bare = (address ?? "").replace(/^\[|\]$/g, "").replace(/^::ffff:(?=\d+\.)/, "");
  return `${bare} ${port}`;
}
