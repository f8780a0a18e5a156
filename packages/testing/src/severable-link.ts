import { connect, createServer, type Socket } from "node:net";

/** A TCP relay to a server that a test can cut, to see what a client misses while its connection is down. */
export interface SeverableLink {
  /** `host:port` to give the client in place of the server's. */
  address: string;
  /** Drops every connection through the link, and every new one until `restore`. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startSeverableLink(target: { host: string; port: number }): Promise<SeverableLink> {
  const open = new Set<Socket>();
  let isCut = false;
  const server = createServer((client) => {
    if (isCut) return void client.destroy();
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.setNoDelay(true);
      socket.on("error", () => undefined);
      socket.on("close", () => {
        open.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const dropAll = () => {
    for (const socket of open) socket.destroy();
  };
  return {
    address: `127.0.0.1:${port}`,
    cut() {
      isCut = true;
      dropAll();
    },
    restore() {
      isCut = false;
    },
    close: () =>
      new Promise((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}
