import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";

/** How long a chosen port stays reserved: ample time for the server it is meant for to bind it. */
const RESERVATION_MS = 60_000;
const LOWEST = 10_000;

/**
 * A free TCP port on loopback, for a server about to be started on it (often by another process).
 *
 * Asking the kernel for port 0 and closing it leaves a window in which anyone else asking gets the same port: two
 * test files starting stacks at once, or an outgoing connection taking it as its source port. So the port is chosen
 * below the kernel's ephemeral range (which outgoing connections and `listen(0)` draw from), and reserved across
 * every process of this machine for a minute by holding an abstract Unix socket named after it (released by the
 * kernel when this process ends, so nothing is ever left to clean up).
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const span = low - LOWEST;
  if (span < 1_000) return kernelPort();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * span);
    const reservation = await reserve(port);
    if (!reservation) continue;
    if (await bindable(port)) {
      setTimeout(() => reservation.close(), RESERVATION_MS).unref();
      return port;
    }
    reservation.close();
  }
  return kernelPort();
}

function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    return [low, high];
  } catch {
    return [LOWEST, LOWEST]; // not Linux: no abstract sockets either, let the kernel choose
  }
}

/** Holds `\0bas-port-<port>`; undefined when another process holds it. */
function reserve(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(undefined));
    server.listen(`\0bas-port-${port}`, () => resolve(server));
  });
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.unref();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
