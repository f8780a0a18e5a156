import type { BrowserHandle } from "./events";

/** What a driver needs to launch one browser. */
export interface LaunchSpec {
  /** The browser's id; drivers mark what they launch with it so orphans can be found. */
  browserId: string;
  screenWidth: number;
  screenHeight: number;
  /** Where the browser's egress proxy listens: every connection the browser makes goes through it. */
  egress: EgressAddress;
  /** Fills the fresh profile folder (a saved profile's state) before the browser starts; `uid` is its owner. */
  prepareProfile?: (userDataDir: string, uid: number | undefined) => Promise<void>;
  /** The caller's own proxy inspects TLS: the browser accepts any certificate. */
  ignoreCertificateErrors?: boolean;
}

/** A Unix socket (local browsers reach it from their sandbox) or a TCP address (pods reach it over the network). */
export type EgressAddress = { path: string } | { host: string; port: number };

export interface BrowserMemory {
  /** Resident set, summed over the browser's processes (counts shared pages once per process). */
  rssBytes: number;
  /** Proportional set size: shared pages split between the processes sharing them. */
  pssBytes: number;
  processes: number;
}

/** One launched browser, as the pool holds it. */
export interface RunningBrowser {
  readonly id: string;
  readonly handle: BrowserHandle;
  /** Called once if the browser goes away by itself; never after `kill()`. */
  onExit(listener: (detail: string) => void): void;
  /** Ends the browser at once; resolves when it is gone and its data removed. Safe to call twice. */
  kill(): Promise<void>;
  /** Memory of all its processes; undefined when the driver cannot see them. */
  memory(): Promise<BrowserMemory | undefined>;
  /** How callers' CDP connections reach the browser without the proxy relaying them; undefined: the proxy relays. */
  readonly cdpRelay?: CdpRelay;
}

/** A caller's open connection, as a relay takes it over: what it is handed and who is at the other end. */
export interface CallerConnection {
  /** The connection's file descriptor, which the relay process inherits. */
  descriptor: number;
  remoteAddress?: string;
  remotePort?: number;
}

/** Carries callers' CDP connections straight to the browser, each in a process of its own. */
export interface CdpRelay {
  /**
   * A relay for `caller`, whose upgrade request was read here: it sends `request` (that request re-addressed to the
   * browser) on, then copies bytes both ways until either side ends. The relay ending is the connection ending.
   */
  start(caller: CallerConnection, request: string): RelayRun;
  /** No relay starts after this; the running ones are the caller's to end. */
  close(): void;
}

/** One caller's connection being carried. */
export interface RelayRun {
  /** Ends it at once. */
  kill(): void;
  /** Resolves when it has ended: with what the relay said when it failed rather than saw either side end. */
  readonly ended: Promise<{ failure?: string }>;
}

/** Port for where browsers run: local processes or Kubernetes pods. */
export interface BrowserDriver {
  readonly name: BrowserHandle["driver"];
  /**
   * Whether a running browser's window can be resized so that a client's new page opens at the new size too; where
   * not (the headless shell), a warm browser serves only requests of its own size.
   */
  readonly resizesWindows: boolean;
  /**
   * Where a browser's egress proxy must listen for the browser to reach it: fresh for a launch, the one it had for
   * an adopted browser (`handle`).
   */
  egressAddress(browserId: string, handle?: BrowserHandle): Promise<EgressAddress>;
  launch(spec: LaunchSpec): Promise<RunningBrowser>;
  /** Finds a browser of an earlier run of this node again; undefined (and its leftovers removed) when it is gone. */
  adopt(browserId: string, handle: BrowserHandle): Promise<RunningBrowser | undefined>;
  /** Ends every browser this node launched whose id is not in `keep`; returns the ids it ended. */
  reapOrphans(keep: ReadonlySet<string>): Promise<string[]>;
  close(): Promise<void>;
}
