import type { DomainEvent } from "@bas/event-store";
import type { BrowserSettings } from "./browser-settings";

/** Aggregate type of the browser lifecycle on the event stream. */
export const BROWSER_AGGREGATE = "browser";

/** `shutdown`: the service was stopped with STOP_BROWSERS_ON_SHUTDOWN (the default) instead of leaving them to adopt. */
export const STOP_REASONS = ["caller", "timeout", "crash", "session_ended", "shutdown"] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/**
 * Where a running browser lives, as a driver needs it to find the browser again after a restart. Stored in the
 * `BrowserStarted` event, so the event log is the registry of every browser a node owns.
 */
export type BrowserHandle =
  | {
      driver: "local";
      /** DevTools browser endpoint on the sandbox's own loopback: ws://127.0.0.1:9222/devtools/browser/GUID. */
      devtoolsUrl: string;
      /** The Unix socket that endpoint is reached through from this host. */
      devtoolsSocket: string;
      /** Leader of the browser's process group (its sandbox). */
      pid: number;
      userDataDir: string;
      /** The unprivileged user Chromium runs as; undefined when browser-pool itself is not root. */
      uid?: number;
      /** Always null: a local browser's egress proxy listens on a socket beside `devtoolsSocket`. */
      proxyPort: null;
    }
  | {
      driver: "container";
      /** DevTools browser endpoint on the container's own loopback: ws://127.0.0.1:9221/devtools/browser/GUID. */
      devtoolsUrl: string;
      /** The Unix socket that endpoint is reached through from this host (bound into the container). */
      devtoolsSocket: string;
      containerId: string;
      /** The profile, a folder of this host's bound into the container at the same path. */
      userDataDir: string;
      /** Always null: the browser's egress proxy listens on a socket beside `devtoolsSocket`. */
      proxyPort: null;
    }
  | {
      driver: "kubernetes";
      devtoolsUrl: string;
      podName: string;
      podNamespace: string;
      /** Port of the browser's egress proxy on its replica, re-opened on the same port after a restart. */
      proxyPort: number | null;
    };

/** The Unix socket through which this host reaches a browser's DevTools; undefined for a pod, reached over TCP. */
export const devtoolsSocketOf = (handle: BrowserHandle): string | undefined =>
  handle.driver === "kubernetes" ? undefined : handle.devtoolsSocket;

export type BrowserRequested = DomainEvent<
  "BrowserRequested",
  {
    projectId: string;
    /** The v3 session the browser serves; null for a browser created through the browsers API. */
    sessionId: string | null;
    settings: BrowserSettings;
    timeoutMinutes: number;
    /** ISO-8601: when the browser stops by itself. */
    timeoutAt: string;
    metadata: Record<string, string>;
    /** The browser-pool node that launches and owns the browser. */
    nodeId: string;
    /** Secret part of the CDP URL; the proxy compares it in constant time. */
    cdpSecret: string;
    /** Public CDP URL handed to the caller (carries the secret). */
    cdpUrl: string;
  }
>;

export type BrowserStarted = DomainEvent<"BrowserStarted", { nodeId: string; handle: BrowserHandle; warm: boolean }>;

export type BrowserStopped = DomainEvent<
  "BrowserStopped",
  {
    reason: StopReason;
    /** Why, in words, when the reason alone does not say (a crash's exit code, a failed launch). */
    detail: string | null;
    /**
     * CDP bytes through the proxy while this node served the browser: caller → browser and back. A relayed
     * connection's as counted before the stop (`CdpEndpoint.bytesIn`).
     */
    cdpBytesIn: number;
    cdpBytesOut: number;
  }
>;

/** The browser's recording was encoded and stored, after it stopped. */
export type BrowserRecordingSaved = DomainEvent<
  "BrowserRecordingSaved",
  {
    /** Blob reference of the MP4. */
    ref: string;
    /** The session the browser served, so sessions can list the recording with it. */
    sessionId: string | null;
    /** From the start of the recording to the stop. */
    durationMs: number;
    bytes: number;
  }
>;

/** A file the browser downloaded was stored. */
export type BrowserFileDownloaded = DomainEvent<
  "BrowserFileDownloaded",
  {
    /** Chromium's id of the download. */
    guid: string;
    /** The name the page offered, without folders. */
    fileName: string;
    url: string;
    size: number;
    /** Blob reference of the file. */
    ref: string;
  }
>;

export type BrowserEvent =
  | BrowserRequested
  | BrowserStarted
  | BrowserStopped
  | BrowserRecordingSaved
  | BrowserFileDownloaded;
