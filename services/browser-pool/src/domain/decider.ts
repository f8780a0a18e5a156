import type { Decider } from "@bas/event-store";
import { IllegalStateError, LimitExceededError, NotFoundError } from "@bas/errors";
import type { BrowserEvent, BrowserFileDownloaded, BrowserHandle, BrowserRequested, StopReason } from "./events";

type Request = BrowserRequested["data"] & {
  /** Ids of the downloads kept so far. */
  downloads: string[];
};

/** A browser keeps at most this many downloads; later ones are not kept (a page must not fill the store). */
export const MAX_DOWNLOADS_PER_BROWSER = 100;

export type BrowserState =
  | { status: "none" }
  | ({ status: "requested"; requestedAt: string } & Request)
  | ({ status: "active"; requestedAt: string; startedAt: string; handle: BrowserHandle } & Request)
  | ({
      status: "stopped";
      requestedAt: string;
      startedAt: string | null;
      finishedAt: string;
      reason: StopReason;
      handle: BrowserHandle | null;
      /** Blob reference of the recording, once it is stored. */
      recordingRef: string | null;
    } & Request);

export type BrowserCommand =
  | {
      type: "RequestBrowser";
      request: BrowserRequested["data"];
      /** Set when a warm browser is handed out: it is already running, so it starts at once. */
      launched?: { handle: BrowserHandle };
    }
  | { type: "RecordStarted"; nodeId: string; handle: BrowserHandle }
  | {
      type: "StopBrowser";
      reason: StopReason;
      detail?: string;
      cdpBytesIn?: number;
      cdpBytesOut?: number;
      /** When a caller stops it: the caller's project; another project's browser is as absent as a missing one. */
      projectId?: string;
    }
  | { type: "SaveRecording"; ref: string; durationMs: number; bytes: number }
  | { type: "RecordDownload"; download: BrowserFileDownloaded["data"] };

export const browserDecider: Decider<BrowserCommand, BrowserEvent, BrowserState> = {
  initialState: () => ({ status: "none" }),

  evolve(state, event) {
    switch (event.type) {
      case "BrowserRequested":
        return { status: "requested", requestedAt: event.occurredAt, ...event.data, downloads: [] };
      case "BrowserStarted":
        if (state.status !== "requested") return state;
        return { ...state, status: "active", startedAt: event.occurredAt, handle: event.data.handle };
      case "BrowserStopped":
        if (state.status !== "requested" && state.status !== "active") return state;
        return {
          ...state,
          status: "stopped",
          startedAt: state.status === "active" ? state.startedAt : null,
          handle: state.status === "active" ? state.handle : null,
          finishedAt: event.occurredAt,
          reason: event.data.reason,
          recordingRef: null,
        };
      case "BrowserRecordingSaved":
        if (state.status !== "stopped") return state;
        return { ...state, recordingRef: event.data.ref };
      case "BrowserFileDownloaded":
        if (state.status === "none") return state;
        return { ...state, downloads: [...state.downloads, event.data.guid] };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case "RequestBrowser": {
        if (state.status !== "none") throw new IllegalStateError("browser already exists");
        const requested: BrowserEvent = { type: "BrowserRequested", data: command.request };
        if (!command.launched) return [requested];
        return [
          requested,
          {
            type: "BrowserStarted",
            data: { nodeId: command.request.nodeId, handle: command.launched.handle, warm: true },
          },
        ];
      }
      case "RecordStarted":
        if (state.status === "none") throw new NotFoundError("Browser not found");
        // Stopped while it launched: nothing to record; the caller tears the fresh browser down.
        if (state.status !== "requested") return [];
        return [{ type: "BrowserStarted", data: { nodeId: command.nodeId, handle: command.handle, warm: false } }];
      case "StopBrowser":
        if (state.status === "none") throw new NotFoundError("Browser not found");
        if (command.projectId !== undefined && command.projectId !== state.projectId) {
          throw new NotFoundError("Browser not found");
        }
        if (state.status === "stopped") return [];
        return [
          {
            type: "BrowserStopped",
            data: {
              reason: command.reason,
              detail: command.detail ?? null,
              cdpBytesIn: command.cdpBytesIn ?? 0,
              cdpBytesOut: command.cdpBytesOut ?? 0,
            },
          },
        ];
      case "SaveRecording":
        if (state.status === "none") throw new NotFoundError("Browser not found");
        // A recording is complete only once the browser stopped.
        if (state.status !== "stopped") throw new IllegalStateError("the browser is still running");
        if (state.recordingRef === command.ref) return [];
        return [
          {
            type: "BrowserRecordingSaved",
            data: {
              ref: command.ref,
              sessionId: state.sessionId,
              durationMs: command.durationMs,
              bytes: command.bytes,
            },
          },
        ];
      case "RecordDownload":
        if (state.status === "none") throw new NotFoundError("Browser not found");
        if (state.downloads.includes(command.download.guid)) return [];
        if (state.downloads.length >= MAX_DOWNLOADS_PER_BROWSER) {
          throw new LimitExceededError(`a browser keeps at most ${MAX_DOWNLOADS_PER_BROWSER} downloads`);
        }
        return [{ type: "BrowserFileDownloaded", data: command.download }];
      default: {
        const unknown: never = command;
        throw new Error(`unknown command ${JSON.stringify(unknown)}`);
      }
    }
  },
};
