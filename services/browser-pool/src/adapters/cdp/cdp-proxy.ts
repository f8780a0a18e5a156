import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, STATUS_CODES, type ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { CdpEndpoint, CdpEndpointSpec, CdpEndpoints } from "../../app/ports";
import type { CdpRelay } from "../../domain/browser-driver";
import {
  type CdpRoute,
  type LiveRoute,
  liveModeOf,
  liveUrlFor,
  parseCdpRoute,
  parseLiveRoute,
  secretMatches,
} from "../../domain/cdp-route";
import {
  type DevtoolsAddress,
  devtoolsUpstream,
  fetchDevtoolsJson,
  rewriteTargetList,
  rewriteVersion,
} from "./devtools-json";
import { livePage } from "./live-page";
import { type LiveSession, startLiveSession } from "./live-session";
import { type RelayedConnection, relayConnection, type Traffic } from "./relayed-connection";
import { createSocketCounter } from "./socket-counts";

export interface CdpProxy extends CdpEndpoints {
  readonly port: number;
  /** What went through the proxy since it started, all browsers together (for metrics). */
  readonly traffic: CdpTraffic;
  close(): Promise<void>;
}

export interface CdpTraffic {
  /** CDP bytes from callers to browsers. */
  readonly bytesToBrowsers: number;
  /** CDP bytes from browsers to callers. */
  readonly bytesToClients: number;
  /** CDP connections open right now. */
  readonly connections: number;
  /** Brings the byte counts of connections that relays carry up to date (they are read from the kernel). */
  refresh(): Promise<void>;
}

const NOT_FOUND = "Browser not found, stopped, or the credential is wrong";
/**
 * Relay processes (`CdpEndpointSpec.relay`) one browser may have at once, and may start a minute. Connections beyond
 * either are spliced here, which costs no process: a caller opening connections by the hundred, or opening and
 * closing them in a loop, cannot load the host with processes.
 */
export const RELAYS_PER_BROWSER = 10;
const RELAY_STARTS_PER_MINUTE = 60;
/** Live viewers of one browser at once. */
export const MAX_LIVE_VIEWERS = 10;

interface Entry extends CdpEndpoint {
  spec: CdpEndpointSpec;
  upstream: DevtoolsAddress & { browserPath: string };
  sockets: Set<Duplex>;
  /** Callers' connections that relay processes carry (`CdpEndpointSpec.relay`). */
  relays: Set<RelayedConnection>;
  /** Relays started in the current minute, from `since`. */
  relayStarts: { since: number; count: number };
  /** Live views open on the browser: told when it stops. */
  live: Set<LiveSession>;
  bytesIn: number;
  bytesOut: number;
  clients: number;
  /** Until the browser is ready (`CdpEndpointSpec.ready`): whether it became so. */
  ready?: Promise<boolean>;
}

/**
 * The only way in to a browser: an HTTP server whose WebSocket upgrades, once the credential in the path checks out,
 * are spliced byte for byte onto a TCP connection to the browser. Nothing on the hot path parses CDP or even
 * WebSocket frames, so a message costs two socket writes; a caller hanging up never touches the browser.
 */
export async function startCdpProxy(options: {
  host: string;
  port: number;
  /** CSP `frame-ancestors` of the live view page (default `*`). */
  liveFrameAncestors?: string;
  /** Extra figures for `GET /healthz` (the pool's state), for probes and operators. */
  health?: () => Record<string, unknown>;
  /** A relay (`CdpEndpointSpec.relay`) failed: what it printed. Its caller was disconnected. */
  onRelayFailure?: (failure: { browserId: string; stderr: string }) => void;
}): Promise<CdpProxy> {
  const entries = new Map<string, Entry>();
  // Plain sums on the hot path; the metrics read them when scraped.
  const traffic = {
    bytesToBrowsers: 0,
    bytesToClients: 0,
    connections: 0,
    async refresh() {
      const open = [...entries.values()].flatMap((entry) => [...entry.relays].map((relayed) => ({ entry, relayed })));
      await Promise.all(open.map(async ({ entry, relayed }) => carried(entry, await relayed.count())));
    },
  };
  // A viewer sends small input messages only; anything bigger is cut off rather than buffered.
  const liveSockets = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 * 1024 });
  const server = createServer((req, res) => void handleHttp(req, res));
  server.on("upgrade", handleUpgrade);
  server.on("clientError", (_err, socket) => socket.destroy());
  const socketCounter = createSocketCounter(() => (server.address() as { port: number }).port);

  /**
   * An unknown id, a stopped browser and a wrong or missing credential all get the same 404, so the answer never
   * tells a prober which browser ids exist.
   */
  function authorize(route: CdpRoute | undefined) {
    const entry = route && entries.get(route.browserId);
    if (!entry || !secretMatches(entry.spec.secret, route.secret)) return refusal(404, NOT_FOUND);
    return { entry, status: 200, detail: "" };
  }

  /** The browser and the mode a live view link opens; nothing for an unknown, stopped or wrong one. */
  function authorizeLive(route: LiveRoute | undefined) {
    const entry = route && entries.get(route.browserId);
    const mode = entry && route && liveModeOf(entry.spec.secret, route.token);
    return entry && mode ? { entry, mode } : undefined;
  }

  function handleUpgrade(req: IncomingMessage, client: Duplex, head: Buffer) {
    const live = parseLiveRoute(req.url);
    if (live) {
      const found = live.kind === "live-socket" ? authorizeLive(live) : undefined;
      if (!found) return refuse(client, 404, NOT_FOUND);
      const { entry, mode } = found;
      if (waitsUntilReady(entry, req, client, head)) return;
      // Each viewer costs a CDP connection and a screencast: a shared link must not become a way to load the host.
      if (entry.live.size >= MAX_LIVE_VIEWERS) return refuse(client, 429, "Too many live viewers of this browser");
      const viewUrl = mode === "control" ? liveUrlFor(publicBase(req, entry.spec.publicUrl), "view") : undefined;
      liveSockets.handleUpgrade(req, client, head, (socket) => {
        const session = startLiveSession(socket, entry.upstream, mode, {
          viewUrl,
          onClose: () => entry.live.delete(session),
        });
        entry.live.add(session);
      });
      return;
    }
    const route = parseCdpRoute(req.url);
    const { entry, status, detail } = authorize(route);
    if (!entry || !route || (route.kind !== "browser" && route.kind !== "target")) {
      refuse(client, entry ? 404 : status, entry ? NOT_FOUND : detail);
      return;
    }
    if (waitsUntilReady(entry, req, client, head)) return;
    const path = route.kind === "target" ? route.targetPath : entry.upstream.browserPath;
    const request = handshake(req, path, entry.upstream);
    const socket = client as Socket;
    // A client that sent frames before the answer (none we know does) is relayed here, where they are not lost.
    if (entry.spec.relay && head.length === 0 && socket.readableLength === 0 && mayRelay(entry)) {
      return handOff(entry, socket, request, entry.spec.relay);
    }
    const { socketPath, host, port } = entry.upstream;
    const upstream = socketPath ? connect({ path: socketPath }) : connect({ host, port });
    socket.setNoDelay?.(true);
    upstream.setNoDelay(true);
    track(entry, client, upstream);
    upstream.once("connect", () => {
      upstream.write(request);
      if (head.length > 0) {
        entry.bytesIn += head.length;
        traffic.bytesToBrowsers += head.length;
        upstream.write(head);
      }
      splice(client, upstream, (n) => {
        entry.bytesIn += n;
        traffic.bytesToBrowsers += n;
      });
      splice(upstream, client, (n) => {
        entry.bytesOut += n;
        traffic.bytesToClients += n;
      });
    });
  }

  /**
   * An upgrade to a browser that is not ready yet is held, and handled again (authorized anew) once it is; refused
   * as for a stopped browser if it never becomes so. Nothing is held once the browser is ready.
   */
  function waitsUntilReady(entry: Entry, req: IncomingMessage, client: Duplex, head: Buffer): boolean {
    if (!entry.ready) return false;
    void entry.ready.then((ready) => {
      if (client.destroyed) return;
      if (ready) handleUpgrade(req, client, head);
      else refuse(client, 404, NOT_FOUND);
    });
    return true;
  }

  /**
   * Hands a caller's connection to a relay process that carries it straight to the browser (a local browser's relay
   * runs in its sandbox's network): a message then passes one relay, as on the sandbox's own DevTools socket, rather
   * than this process and then the sandbox's bridge, which kept ~77 % of direct throughput (bench/browsers.ts (c)).
   */
  function handOff(entry: Entry, client: Socket, request: string, relay: CdpRelay) {
    const relayed = relayConnection(client, request, relay, socketCounter);
    if (!relayed) return refuse(client, 404, NOT_FOUND);
    entry.relays.add(relayed);
    entry.clients += 1;
    traffic.connections += 1;
    void relayed.ended.then(({ failure, ...last }) => {
      if (failure !== undefined) options.onRelayFailure?.({ browserId: entry.spec.browserId, stderr: failure });
      carried(entry, last);
      entry.relays.delete(relayed);
      entry.clients -= 1;
      traffic.connections -= 1;
    });
  }

  function mayRelay(entry: Entry): boolean {
    if (entry.relays.size >= RELAYS_PER_BROWSER) return false;
    const now = Date.now();
    if (now - entry.relayStarts.since >= 60_000) entry.relayStarts = { since: now, count: 0 };
    if (entry.relayStarts.count >= RELAY_STARTS_PER_MINUTE) return false;
    entry.relayStarts.count += 1;
    return true;
  }

  function carried(entry: Entry, { bytesIn, bytesOut }: Traffic) {
    entry.bytesIn += bytesIn;
    entry.bytesOut += bytesOut;
    traffic.bytesToBrowsers += bytesIn;
    traffic.bytesToClients += bytesOut;
  }

  function track(entry: Entry, client: Duplex, upstream: Socket) {
    entry.sockets.add(client);
    entry.sockets.add(upstream);
    entry.clients += 1;
    traffic.connections += 1;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      entry.clients -= 1;
      traffic.connections -= 1;
      entry.sockets.delete(client);
      entry.sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on("error", close);
      socket.on("close", close);
    }
    // One side finished sending (after its WebSocket close frame): pass that on once the data before it is out.
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
  }

  async function handleHttp(req: IncomingMessage, res: ServerResponse) {
    if (req.url === "/healthz") return sendJson(res, 200, { status: "ok", ...options.health?.() });
    const live = parseLiveRoute(req.url);
    if (live) return sendLivePage(res, live.kind === "live-page" && !!authorizeLive(live));
    const route = parseCdpRoute(req.url);
    const { entry, status, detail } = authorize(route);
    if (!entry || !route) return sendJson(res, status, { detail });
    if (req.method !== "GET") return sendJson(res, 405, { detail: "Method not allowed" });
    const base = publicBase(req, entry.spec.publicUrl);
    try {
      if (route.kind === "json-version") {
        const version = await fetchDevtoolsJson(entry.upstream, "/json/version");
        return sendJson(res, 200, rewriteVersion(version, base));
      }
      if (route.kind === "json-list") {
        const list = await fetchDevtoolsJson(entry.upstream, "/json/list");
        return sendJson(res, 200, rewriteTargetList(list, base));
      }
      return sendJson(res, 426, { detail: "Connect with a WebSocket client (CDP) to this URL" });
    } catch {
      return sendJson(res, 502, { detail: "The browser did not answer" });
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });

  function unregister(browserId: string) {
    const entry = entries.get(browserId);
    if (!entry) return;
    entries.delete(browserId);
    for (const socket of entry.sockets) socket.destroy();
    for (const session of entry.live) session.end();
    // Their last counts come in once they have ended (`handOff`): in the metrics, after the browser's stop.
    for (const relayed of entry.relays) relayed.kill();
  }

  /**
   * The live view page, or the same page's "not running" state with a 404 for a stopped or unknown browser and a
   * wrong link alike (which ids exist is never told). Embeddable where `liveFrameAncestors` allows.
   */
  function sendLivePage(res: ServerResponse, found: boolean) {
    const nonce = randomBytes(16).toString("base64");
    const body = found ? livePage(nonce) : endedPage;
    res.writeHead(found ? 200 : 404, {
      "content-type": "text/html; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff",
      "content-security-policy":
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; img-src data:; ` +
        `connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${options.liveFrameAncestors ?? "*"}`,
    });
    res.end(body);
  }

  return {
    port: (server.address() as { port: number }).port,
    traffic,
    register(spec) {
      const entry: Entry = {
        spec,
        upstream: devtoolsUpstream(spec.devtoolsUrl, spec.devtoolsSocket),
        sockets: new Set(),
        relays: new Set(),
        relayStarts: { since: 0, count: 0 },
        live: new Set(),
        bytesIn: 0,
        bytesOut: 0,
        clients: 0,
      };
      // Cleared as it settles, so an upgrade held until then goes straight through when handled again.
      entry.ready = spec.ready?.then(
        () => {
          entry.ready = undefined;
          return true;
        },
        () => false,
      );
      entries.set(spec.browserId, entry);
      return entry;
    },
    unregister,
    async close() {
      for (const entry of entries.values()) for (const relayed of entry.relays) relayed.abandon();
      for (const id of [...entries.keys()]) unregister(id);
      liveSockets.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}

/**
 * Copies every chunk from one socket to the other as it arrives, counting it, with back-pressure: one listener per
 * chunk and nothing else (`pipe` plus a counting listener costs twice the event-loop work per message). Measured
 * (bench/browsers.ts (c), 5 connections): reading the browser's side with `onread` into a shared buffer saved ~3 % of
 * this process's CPU per call and no throughput, and socat in the same place keeps only ~86 % of direct: an extra hop
 * costs its wake-ups (one read, one write, one epoll_wait a chunk here already), not this code.
 */
function splice(from: Duplex, to: Duplex, count: (bytes: number) => void) {
  from.on("data", (chunk: Buffer) => {
    count(chunk.length);
    if (!to.write(chunk)) from.pause();
  });
  to.on("drain", () => from.resume());
}

function refusal(status: number, detail: string): { entry?: Entry; status: number; detail: string } {
  return { status, detail };
}

/** The client's upgrade request, re-addressed to the browser. Origin is dropped: Chromium refuses foreign origins. */
function handshake(req: IncomingMessage, path: string, upstream: { host: string; port: number }): string {
  let head = `GET ${path} HTTP/1.1\r\nHost: ${upstream.host}:${upstream.port}\r\n`;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (name === "host" || name === "origin" || name.startsWith("x-forwarded-")) continue;
    head += `${raw[i]}: ${raw[i + 1]}\r\n`;
  }
  return `${head}\r\n`;
}

/** The base URL the caller used, so `/json/version` hands back a URL reachable the same way. */
function publicBase(req: IncomingMessage, publicUrl: string): string {
  const pub = new URL(publicUrl);
  const host = req.headers.host;
  if (!host || host === pub.host) return publicUrl;
  const secure = req.headers["x-forwarded-proto"] === "https";
  return `${secure ? "wss" : "ws"}://${host}${pub.pathname}`;
}

function refuse(socket: Duplex, status: number, detail: string) {
  const body = JSON.stringify({ detail });
  const reason = STATUS_CODES[status] ?? "Bad Request";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  socket.on("error", () => undefined);
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

const endedPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Live browser</title>
<style>html,body{margin:0;height:100%;background:#0f1115;color:#9aa3b2;font:15px/1.4 system-ui,sans-serif}
body{display:flex;align-items:center;justify-content:center;text-align:center;padding:24px}</style></head>
<body><p>This browser is not running: it has ended, or the link is wrong.</p></body></html>`;
