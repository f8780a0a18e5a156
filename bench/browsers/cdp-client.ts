import WebSocket from "ws";

export interface CdpClient {
  send(method: string, params?: object): Promise<any>;
  close(): void;
}

/** A bare CDP client over one WebSocket: nothing between the measurement and the wire but `ws`. */
export async function openCdp(url: string): Promise<CdpClient> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
    ws.once("unexpected-response", (_req, res) => reject(new Error(`CDP handshake refused: ${res.statusCode}`)));
  });
  ws.on("error", () => undefined);
  let next = 1;
  const pending = new Map<number, { resolve(v: any): void; reject(e: Error): void }>();
  ws.on("message", (data) => {
    const msg = JSON.parse(data.toString());
    const waiter = msg.id ? pending.get(msg.id) : undefined;
    if (!waiter) return;
    pending.delete(msg.id);
    if (msg.error) waiter.reject(new Error(msg.error.message));
    else waiter.resolve(msg.result);
  });
  ws.on("close", () => {
    for (const w of pending.values()) w.reject(new Error("closed"));
    pending.clear();
  });
  return {
    send(method, params = {}) {
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params }));
      });
    },
    close: () => ws.close(),
  };
}
