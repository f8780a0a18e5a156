import type { StreamNames } from "@bas/event-store";
import { BROWSER_AGGREGATE } from "@bas/proto";
import type { NatsConnection } from "@nats-io/transport-node";
import type { BrowserPool } from "../../app/browser-pool";
import { watchEvents } from "./watch-events";

/**
 * Tears down this node's browsers that another node recorded as stopped (a stop call or a session's end handled
 * elsewhere): `stop` on a stopped browser decides nothing new and ends this node's instance. Core NATS is enough: a
 * missed message only delays the tear-down until the browser's own timeout.
 */
export function watchForeignStops(
  nc: NatsConnection,
  streams: StreamNames,
  pool: Pick<BrowserPool, "runs" | "stop">,
  log: { warn(o: object, msg: string): void },
): { close(): void } {
  return watchEvents(nc, streams, BROWSER_AGGREGATE, ["BrowserStopped"], (browserId) => {
    if (!pool.runs(browserId)) return;
    // The reason recorded by the other node stands: a stopped browser takes no new one.
    void pool.stop(browserId, { reason: "caller" }).catch((error) => {
      log.warn({ err: error, browserId }, "tearing down a browser stopped elsewhere failed");
    });
  });
}
