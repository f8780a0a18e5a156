import WebSocket from "ws";

/** Status code of a refused WebSocket handshake (the proxy answers plain HTTP), or "open" when it is accepted. */
export function handshake(url: string): Promise<number | "open"> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once("open", () => {
      ws.close();
      resolve("open");
    });
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once("error", (err) => reject(err));
  });
}
