import type { CdpRelay, EgressAddress, LaunchSpec, RunningBrowser } from "../domain/browser-driver";
import type { BrowserHandle } from "../domain/events";
import type { BrowserSettings, CustomProxy, ProxyCredentials, WindowSize } from "../domain/browser-settings";
import type { BrowserView } from "../domain/browser-view";

/** What the app needs from the outside, implemented in `adapters/` and wired in `service.ts`. */

/** A browser as the read model keeps it. */
export interface BrowserRecord {
  id: string;
  projectId: string;
  sessionId: string | null;
  /** requested → active → stopped; a requested browser is still launching. */
  status: "requested" | "active" | "stopped";
  nodeId: string;
  settings: BrowserSettings;
  handle: BrowserHandle | null;
  cdpUrl: string;
  cdpSecret: string;
  timeoutAt: Date;
  requestedAt: Date;
  startedAt: Date | null;
}

/** Which of a project's browsers a list shows: by shown status, by session. */
export interface BrowserListFilter {
  status?: BrowserView["status"];
  sessionId?: string;
}

/** The browser read model (Postgres), written from `browser` events. */
export interface BrowserReadModel {
  /** One browser of a project; another project's browser is as absent as a missing one. */
  find(projectId: string, browserId: string): Promise<BrowserView | undefined>;
  /** A project's browsers, newest first; only those `filter` names, when it names any. */
  list(
    projectId: string,
    page: { number: number; size: number },
    filter?: BrowserListFilter,
  ): Promise<{ views: BrowserView[]; total: number }>;
  /** Those of `ids` recorded as stopped. */
  stoppedAmong(ids: readonly string[]): Promise<string[]>;
  /** Every browser a node launched that is not recorded as stopped: what a restart must adopt or close. */
  liveOnNode(nodeId: string): Promise<BrowserRecord[]>;
  /** The newest browser of a session, whatever its status, with its CDP secret. */
  latestForSession(sessionId: string): Promise<{ view: BrowserView; cdpSecret: string } | undefined>;
  /** A page of a browser's downloads, oldest first; `after` is a `nextCursor` this list gave. */
  downloads(browserId: string, page: { limit: number; after: string | undefined }): Promise<DownloadPage>;
}

/** A file a browser downloaded, as the read model keeps it. */
export interface DownloadRecord {
  fileName: string;
  size: number;
  /** Blob reference of the file. */
  ref: string;
  downloadedAt: Date;
}

export interface DownloadPage {
  items: DownloadRecord[];
  /** Null on the last page. */
  nextCursor: string | null;
}

/** A browser as the CDP proxy serves it. */
export interface CdpEndpointSpec {
  browserId: string;
  secret: string;
  /** The browser's own DevTools endpoint (its sandbox's loopback or a pod IP): ws://host:port/devtools/browser/GUID. */
  devtoolsUrl: string;
  /** The Unix socket a local browser's DevTools is reached through (its sandbox has no port on this host). */
  devtoolsSocket?: string;
  /** Carries callers' connections to the browser in place of the proxy's own relaying (local browsers). */
  relay?: CdpRelay;
  /** The URL callers were given; `/json/version` answers with it. */
  publicUrl: string;
  /**
   * What must be done before callers' CDP gets in (a warm browser's window fitted, its downloads watched): their
   * connections wait for it, so nobody sees the browser before it is as asked. Rejected: they are refused.
   */
  ready?: Promise<unknown>;
}

export interface CdpEndpoint {
  /**
   * CDP bytes from callers to the browser (WebSocket frames after the handshake). A relayed connection's are added
   * when they are counted: when it ends and when the metrics are read (`CdpTraffic.refresh`).
   */
  readonly bytesIn: number;
  /** CDP bytes from the browser to callers. */
  readonly bytesOut: number;
  /** Connections open right now. */
  readonly clients: number;
}

/** The CDP proxy, the only way in to a browser. */
export interface CdpEndpoints {
  register(spec: CdpEndpointSpec): CdpEndpoint;
  /** Closes every open client of the browser at once and refuses new ones from now on. */
  unregister(browserId: string): void;
}

/** How much of a browser has been reported to billing (cumulative). */
export interface UsageMarks {
  browserMs: number;
  proxyBytes: number;
}

/** One UsageRecorded fact for billing, on the usage subject of its kind. */
export interface UsageReport {
  id: string;
  kind: "browser" | "proxy";
  /** The `bas.v1.UsageRecorded` message as JSON. */
  payload: unknown;
}

/** Marks and an outbox: a report is written with its new mark in one transaction and published afterwards. */
export interface UsageStore {
  marks(browserId: string): Promise<UsageMarks>;
  record(browserId: string, marks: UsageMarks, reports: readonly UsageReport[]): Promise<void>;
  pending(limit: number): Promise<UsageReport[]>;
  done(ids: readonly string[]): Promise<void>;
}

/** Publishes a report (its id is the message id, so a retry is stored once). */
export type PublishUsage = (report: UsageReport) => Promise<void>;

/** A browser's egress proxy: every byte it lets out is counted. */
export interface EgressProxy {
  readonly address: EgressAddress;
  /** Bytes between the browser and the proxy, both directions, since the proxy started. */
  bytes(): number;
  /** From now on, goes out this way (a warm browser handed out with settings of its own). */
  reroute(route: EgressRoute): void;
  close(): Promise<void>;
}

/** Where a browser's egress proxy sends what it lets out, and what it lets out. */
export interface EgressRoute {
  /** Upstream proxy to chain to (a country's, or the caller's own), or null to go direct. */
  upstreamUrl: string | null;
  /** The only hosts the browser may reach; null = no limit. */
  allowedDomains: readonly string[] | null;
}

/** A browser with its egress proxy: what the pool hands out and tears down as one. */
export interface Launched {
  id: string;
  running: RunningBrowser;
  networkProxy: EgressProxy;
  /** Whether the proxy's bytes are billed: only a browser with a proxy country uses the (paid) network proxy. */
  metered: boolean;
  /** The size its windows have now: launched with, or fitted to when handed out (`Launcher.resize`). */
  window: WindowSize;
  /** A warm browser's windows, looked up while it waited (see `Launcher.launchWarm`); `resize` takes them. */
  windows?: Promise<BrowserWindows>;
  /** A warm browser's downloads, watched from while it waited (`BrowserPool.watchingDownloads`). */
  downloads?: WatchedDownloads;
  /** Ends the browser and closes its proxy. Safe to call twice. */
  dispose(): Promise<void>;
}

/** The windows of a running browser, over a CDP connection held until `close`. */
export interface BrowserWindows {
  resize(width: number, height: number): Promise<void>;
  close(): void;
}

/** Starts browsers (with their egress proxies) on this node's driver, or takes over those a previous run left. */
/** What a launch needs beyond the recorded settings; never recorded. */
export interface LaunchExtras {
  prepareProfile?: LaunchSpec["prepareProfile"];
  /** The custom proxy's credentials (settings.customProxy), held in memory only. */
  proxyCredentials?: ProxyCredentials;
}

export interface Launcher {
  launch(id: string, settings: BrowserSettings, extras?: LaunchExtras): Promise<Launched>;
  /**
   * A browser for the warm pool: WARM_SETTINGS at the given window size, with what fitting it needs prepared while
   * it waits.
   */
  launchWarm(id: string, window: WindowSize): Promise<Launched>;
  /**
   * Fits a warm browser (launched with WARM_SETTINGS) to a request's settings when it is handed out, in two parts:
   * the route and domain limit of its proxy, then its window size (nothing to do when it already has that size).
   * Only for settings `isWarmEligible` accepts.
   */
  reroute(browser: Launched, settings: BrowserSettings, extras?: LaunchExtras): Promise<void>;
  resize(browser: Launched, settings: BrowserSettings): Promise<void>;
  /** Refuses (InvalidArgumentError) a custom proxy the egress policy closes or whose name does not resolve. */
  checkCustomProxy(proxy: CustomProxy): Promise<void>;
  /** Undefined when the browser is gone, or its proxy cannot be opened where the browser expects it. */
  adopt(id: string, handle: BrowserHandle, settings: BrowserSettings): Promise<Launched | undefined>;
}

/** A browser's recording, encoded and waiting to be stored. */
export interface RecordedVideo {
  /** The MP4 on this node's disk. */
  file: string;
  /** From the start of the recording to the stop. */
  durationMs: number;
  bytes: number;
  /** Removes the file. */
  dispose(): Promise<void>;
}

/** One browser being recorded. */
export interface ScreenRecording {
  /**
   * Ends the recording now (the video lasts until this call) and encodes what was recorded; undefined when the
   * browser never showed a frame.
   */
  finish(): Promise<RecordedVideo | undefined>;
}

/** Records browsers' screens (enableRecording). */
export interface ScreenRecorder {
  /** Why recording cannot work on this node (its encoder is missing), or undefined when it can. */
  problem(): string | undefined;
  start(id: string, launched: Launched, settings: BrowserSettings): ScreenRecording;
}

/** Where finished recordings are kept (the blob store); answers the reference. */
export type StoreRecording = (browserId: string, video: RecordedVideo) => Promise<string>;

/** A file a browser finished downloading, still where the browser saved it. */
export interface DownloadedFile {
  /** Chromium's id of the download (a UUID). */
  guid: string;
  /** The name the page offered. */
  fileName: string;
  url: string;
  /** Where the browser saved it, on this node. */
  path: string;
}

/** Notices what browsers download. */
export interface DownloadWatcher {
  /**
   * Starts watching a browser; undefined where its files cannot be reached (a pod). `ready` settles once Chromium
   * saves and announces downloads (or could not be told to: the failure is logged, downloads are then not kept).
   */
  watch(id: string, launched: Launched, onFile: (file: DownloadedFile) => void): WatchedDownloads | undefined;
}

export interface WatchedDownloads {
  ready: Promise<void>;
  close(): void;
}

/** Moves a downloaded file into the blob store; answers its reference and size. */
export type StoreDownload = (browserId: string, file: DownloadedFile) => Promise<{ ref: string; size: number }>;

/** A profile as callers see it (the contract's ProfileView, before serialisation). */
export interface ProfileView {
  id: string;
  projectId: string;
  name: string | null;
  userId: string | null;
  lastUsedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** Domains of the cookies it holds, as of its last save. */
  cookieDomains: string[];
  /** The browser that has it open now. */
  openBy: string | null;
}

/** A saved browser state: what a profile carries from one browser to the next. */
export interface SavedProfile {
  ref: string;
  cookieDomains: string[];
}

/** Where profiles' browser states are kept (the blob store) and how they get in and out of a browser. */
export interface ProfileStates {
  /** Fills a fresh profile folder from the saved state `ref`, before its browser starts. */
  restore(ref: string, userDataDir: string, uid: number | undefined): Promise<void>;
  /** After the browser started from `ref`: puts back what its folder cannot hold (session cookies). */
  resume(ref: string, launched: Launched): Promise<void>;
  /**
   * Saves a stopping browser's state as a new blob for profile `profileId`: asks the browser to close (so it writes
   * everything out) and keeps its folder without caches. Undefined when the browser's files are out of reach (a pod).
   */
  save(profileId: string, launched: Launched): Promise<SavedProfile | undefined>;
  /** A saved state nobody will start from any more: its blob goes, and this node's unpacked copy if it has one. */
  discard(ref: string): Promise<void>;
  /** The profile was deleted: its saved state goes (`discard`), and every unpacked copy of its states on this node. */
  forget(profileId: string, stateRef: string | null): Promise<void>;
  /** Every unpacked copy of the profile's states on this node goes (it was deleted through another node). */
  dropCopies(profileId: string): Promise<void>;
  /** The profiles this node holds unpacked copies of. */
  profilesWithCopies(): Promise<string[]>;
}

/** What the pool counts for operators (Prometheus in production). */
export interface PoolMetrics {
  /** A browser was handed out, taken from the warm pool or launched for the caller, `seconds` after it was asked. */
  acquired(source: "warm" | "cold", seconds: number): void;
  /** A warm browser was handed out at another window size than it waited at, so it was resized. */
  warmResized(): void;
}

/**
 * A project's browsers on the other nodes (Postgres): the ones they launch or run, and the ones they have admitted
 * but not recorded yet, so that a burst of creates spread over every replica cannot overshoot a project's limit.
 */
export interface ProjectAdmissions {
  /**
   * Under a lock every node takes for the project: counts the project's browsers elsewhere and, if `here` (this node's
   * browsers of the project with this one) fits beside them under `limit`, admits this browser, so the other nodes
   * count it until the read model shows it. Returns the count elsewhere.
   */
  admit(request: { projectId: string; browserId: string; here: number; limit: number }): Promise<number>;
  /** The count elsewhere alone, admitting nothing. */
  countElsewhere(projectId: string): Promise<number>;
  /** A browser admitted here will not be recorded after all (its create failed first). */
  withdraw(browserId: string): Promise<void>;
  /** Admissions this node made before it restarted: their creates are gone with that process. */
  forgetNode(): Promise<void>;
}

/**
 * Which nodes are alive, by when each was last heard from (the database's clock, the same for every node): a node
 * silent for long is gone, and its browsers with it.
 */
export interface NodeRegistry {
  /** This node is alive now. */
  beat(nodeId: string): Promise<void>;
  /** Nodes silent for at least `silentMs` that still have browsers not recorded as stopped. */
  lostWithBrowsers(silentMs: number): Promise<string[]>;
}
