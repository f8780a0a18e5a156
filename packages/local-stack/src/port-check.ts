import { connect, createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { ConfigError } from "@bas/service-kit";

/** Refuses to start when something already listens on the gateway's address, instead of reporting its health. */
export function checkPortFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE") {
        reject(new ConfigError(`port ${port} on ${host} is in use: stop what uses it, or start with PORT=<another>`));
      } else if (err.code === "EADDRNOTAVAIL") {
        reject(new ConfigError(`HOST=${host} is not an address of this machine`));
      } else reject(err);
    });
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/** Resolves once something accepts connections on 127.0.0.1:`port`; rejects after `timeoutMs` naming `what`. */
export async function waitForPort(port: number, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await accepts(port))) {
    if (Date.now() > deadline) throw new Error(`${what} did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await sleep(200);
  }
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
