/**
 * An HTTP proxy standing in for an upstream (a provider's proxy for a country, or a caller's own `customProxy`): it
 * records who came through and counts every byte from the proxy in front of it (open connections included). With
 * `credentials`, anyone else is refused (407).
 */
export async function startUpstreamProxy(credentials?: { username: string; password: string }) {
  const { Server } = await import("proxy-chain");
  const users: string[] = [];
  const server = new Server({
    port: 0,
    host: "127.0.0.1",
    prepareRequestFunction: ({ username, password }) => {
      if (credentials && (username !== credentials.username || password !== credentials.password)) {
        return { requestAuthentication: true };
      }
      users.push(username);
      return {};
    },
  });
  let closedBytes = 0;
  server.on("connectionClosed", ({ stats }: { stats?: { srcTxBytes: number; srcRxBytes: number } }) => {
    if (stats) closedBytes += stats.srcTxBytes + stats.srcRxBytes;
  });
  await server.listen();
  const statsBytes = (id: number) =>
    (server.getConnectionStats(id)?.srcTxBytes ?? 0) + (server.getConnectionStats(id)?.srcRxBytes ?? 0);
  return {
    port: server.port,
    /** The user name of every request it let through, in order. */
    users,
    bytes: () => server.getConnectionIds().reduce((sum, id) => sum + statsBytes(id), closedBytes),
    close: () => server.close(true),
  };
}

export type UpstreamProxy = Awaited<ReturnType<typeof startUpstreamProxy>>;
