import WebSocket from "ws";
import type { DevtoolsAddress } from "./devtools-json";

/** A CDP connection of our own to a browser (the live view's), over its DevTools socket or port. */
export interface CdpConnection {
  send(method: string, params?: Record<string, unknown>, sessionId?: string): Promise<any>;
  /** Events of `method`, from the browser or from any attached session (`sessionId`). */
  on(method: string, listener: (params: any, sessionId: string | undefined) => void): void;
  onClose(listener: () => void): void;
  close(): void;
}

export function connectCdp(upstream: DevtoolsAddress & { browserPath: string }): Promise<CdpConnection> {
  const url = upstream.socketPath
    ? `ws+unix://${upstream.socketPath}:${upstream.browserPath}`
    : `ws://${upstream.host}:${upstream.port}${upstream.browserPath}`;
  // Chromium answers DevTools only to a Host that is an IP address or localhost.
  const socket = new WebSocket(url, {
    headers: { host: `${upstream.host}:${upstream.port}` },
    perMessageDeflate: false,
  });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const listeners = new Map<string, ((params: any, sessionId: string | undefined) => void)[]>();
  let nextId = 1;

  socket.on("message", (data) => {
    const message = JSON.parse(data.toString());
    if (message.id !== undefined) {
      const call = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) call?.reject(new Error(`${message.error.message} (${message.error.code})`));
      else call?.resolve(message.result);
      return;
    }
    for (const listener of listeners.get(message.method) ?? []) listener(message.params, message.sessionId);
  });
  socket.on("close", () => {
    for (const call of pending.values()) call.reject(new Error("the browser connection closed"));
    pending.clear();
  });

  const connection: CdpConnection = {
    send(method, params = {}, sessionId) {
      if (socket.readyState !== WebSocket.OPEN) return Promise.reject(new Error("the browser connection is closed"));
      const id = nextId++;
      socket.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    },
    on(method, listener) {
      listeners.set(method, [...(listeners.get(method) ?? []), listener]);
    },
    onClose(listener) {
      socket.on("close", listener);
    },
    close: () => socket.close(),
  };
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve(connection));
    socket.once("error", reject);
  });
}
