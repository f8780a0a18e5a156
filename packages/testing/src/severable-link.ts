import { connect, createServer, type Socket } from "node:net";

/** A TCP relay to a server that a test can cut, to see what a client misses while its connection is down. */
export interface SeverableLink {
  /** `host:port` to give the client in place of the server's. */
  address: string;
  /** Drops every connection through the link, and every new one until `restore`. */
  cut(): void;
  /**
   * Lets no byte through any more, either way, yet closes nothing: a network that silently loses packets, which a
   * client notices only by a timeout of its own. Its connections stay dead; new ones hang until `restore`.
   */
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startSeverableLink(target: { host: string; port: number }): Promise<SeverableLink> {
  const open = new Set<Socket>();
  let state: "open" | "cut" | "blackhole" = "open";
  const track = (socket: Socket) => {
    open.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => open.delete(socket));
  };
  const server = createServer((client) => {
    if (state === "cut") return void client.destroy();
    track(client);
    if (state === "blackhole") return void client.pause();
    const upstream = connect(target.port, target.host);
    track(upstream);
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      socket.on("close", () => {
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
      state = "cut";
      dropAll();
    },
    blackhole() {
      state = "blackhole";
      for (const socket of open) {
        socket.unpipe();
        socket.pause();
      }
    },
    restore() {
      state = "open";
    },
    close: () =>
      new Promise((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}
