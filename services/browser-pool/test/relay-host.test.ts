import { spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, fstatSync, openSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { createInterface } from "node:readline";
import { RELAY_HOST_PROGRAM } from "../src/adapters/local/relay-program";

// The relay host copies descriptors of the process that started it by number. One closed and reused before it took
// it (a caller gone, a browser stopped) must never be carried anywhere: it checks each is what it was said to be.
test("the relay host carries only the connection and the network it was named; it ends when its input closes", async () => {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const accepted = once(server, "connection") as Promise<[Socket]>;
  const client = connect((server.address() as { port: number }).port, "127.0.0.1");
  const [socket] = await accepted;
  const fd = (socket as unknown as { _handle: { fd: number } })._handle.fd;
  const network = openSync("/proc/self/ns/net", "r");
  const { dev, ino } = fstatSync(network);
  const host = spawn("perl", ["-e", RELAY_HOST_PROGRAM], { stdio: ["pipe", "pipe", "pipe"] });
  const said: string[] = [];
  createInterface({ input: host.stdout }).on("line", (line) => said.push(line));
  const ended = (id: number) =>
    new Promise<void>((resolve) => {
      const check = () => (said.includes(`ended ${id} code 1`) ? resolve() : setTimeout(check, 20));
      check();
    });
  const request = "GET / HTTP/1.1\r\n\r\n";
  const relay = (id: number, peerPort: number, networkIno: number) =>
    host.stdin.write(
      `relay ${id} ${fd} 127.0.0.1 ${peerPort} ${network} ${dev}:${networkIno} 65534 9 ${request.length}\n${request}`,
    );
  try {
    relay(0, client.localPort! + 1, ino);
    await ended(0);
    relay(1, client.localPort!, ino + 1);
    await ended(1);
    expect(said).toEqual([
      "failed 0 not the caller's connection",
      "ended 0 code 1",
      "failed 1 not the browser's network",
      "ended 1 code 1",
    ]);
    // Nothing reached the caller, whose connection is as it was.
    expect(client.bytesRead).toBe(0);
    expect(socket.destroyed).toBe(false);

    host.stdin.end();
    const [code] = await once(host, "exit");
    expect(code).toBe(0);
  } finally {
    host.kill("SIGKILL");
    closeSync(network);
    client.destroy();
    server.close();
  }
});
