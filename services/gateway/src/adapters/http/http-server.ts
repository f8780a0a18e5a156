import { createServer, type RequestListener, type Server } from "node:http";
import { answerClientErrors } from "./client-errors";

export interface HttpServer {
  port: number;
  /** Stops accepting, lets in-flight requests finish (bounded), then closes every connection. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Listens first and takes the handler later: the handler's dependencies (presigned URLs) need the bound port when
 * PORT is 0. Until `handle` is called nothing is served, and nobody knows the port yet.
 */
export async function startHttpServer(
  port: number,
  host: string,
): Promise<HttpServer & { handle(handler: RequestListener): void }> {
  const server: Server = createServer();
  answerClientErrors(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : port,
    handle: (handler) => server.on("request", handler),
    close: (graceMs = 5_000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
