import type { FollowEventsDeps, FollowedEvents, StreamNames } from "@bas/event-store";
import { BROWSER_AGGREGATE } from "@bas/proto";
import type { BrowserPool } from "../../app/browser-pool";
import { watchEvents } from "./watch-events";

/**
 * Tears down this node's browsers that another node recorded as stopped (a stop call or a session's end handled
 * elsewhere): `stop` on a stopped browser decides nothing new and ends this node's instance. Every stop stored after
 * `after` is heard, even one stored while this node's NATS connection was down: a stopped browser left running would
 * stay usable through its cdpUrl until its timeout.
 */
export function watchForeignStops(
  deps: FollowEventsDeps,
  streams: StreamNames,
  pool: Pick<BrowserPool, "runs" | "stop">,
  after: number,
): Promise<FollowedEvents> {
  return watchEvents(
    deps,
    streams,
    BROWSER_AGGREGATE,
    ["BrowserStopped"],
    (browserId) => {
      if (!pool.runs(browserId)) return;
      // The reason recorded by the other node stands: a stopped browser takes no new one.
      void pool.stop(browserId, { reason: "caller" }).catch((error) => {
        deps.log.warn({ err: error, browserId }, "tearing down a browser stopped elsewhere failed");
      });
    },
    after,
  );
}
