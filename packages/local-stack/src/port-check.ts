import { createServer } from "node:net";
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
