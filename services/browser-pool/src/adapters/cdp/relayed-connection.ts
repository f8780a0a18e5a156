import type { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { CallerConnection, CdpRelay, RelayRun } from "../../domain/browser-driver";
import type { SocketCounter } from "./socket-counts";

const COUNT_AFTER_KILL_MS = 1_000;

/** CDP bytes, each way, after the upgrade request. */
export interface Traffic {
  bytesIn: number;
  bytesOut: number;
}

/** A caller's connection that a relay process carries (see `CdpRelay`). */
export interface RelayedConnection {
  /** What the kernel counted on the connection since the last call. */
  count(): Promise<Traffic>;
  /** Ends the relay, and with it the connection (after its last count, see `ended`). */
  kill(): void;
  /** Ends the relay and the connection at once, uncounted (this process is closing). */
  abandon(): void;
  /**
   * Resolves once the relay has ended, with what it carried since the last `count()` and, when it failed rather than
   * saw either side end, what it printed; the connection is closed here too by then.
   */
  readonly ended: Promise<Traffic & { failure?: string }>;
}

/**
 * Hands `client`, whose upgrade request was read here, to a relay process that sends `request` on to the browser and
 * copies bytes both ways. This process keeps the connection open but reads nothing more from it: the kernel's
 * counts of it (`counter`) are the bytes the relay carried. Undefined when the relay cannot start.
 */
export function relayConnection(
  client: Socket,
  request: string,
  relay: CdpRelay,
  counter: SocketCounter,
): RelayedConnection | undefined {
  // At once: a paused stream still reads ahead into its buffer, which would take bytes meant for the relay.
  (client as unknown as { _handle?: { readStop?: () => void } })._handle?.readStop?.();
  client.setNoDelay(true);
  client.on("error", () => undefined);
  let run: RelayRun;
  try {
    run = relay.start(callerOf(client), request);
  } catch {
    return undefined;
  }
  const peer = { address: client.remoteAddress, port: client.remotePort };
  const requestBytes = client.bytesRead;
  const counted: Traffic = { bytesIn: 0, bytesOut: 0 };
  async function count(): Promise<Traffic> {
    const { received, sent } = await counter.countsOf(peer);
    const added = {
      bytesIn: Math.max(0, received - requestBytes - counted.bytesIn),
      bytesOut: Math.max(0, sent - counted.bytesOut),
    };
    counted.bytesIn += added.bytesIn;
    counted.bytesOut += added.bytesOut;
    return added;
  }
  let killed = false;
  let abandoned = false;
  const ended = run.ended.then(async ({ failure }) => {
    // A stop kills a browser's relays right before it is answered: counting them (an `ss` run, which needs the
    // connection still open) waits until after, and the caller sees the connection close then.
    if (killed) await sleep(COUNT_AFTER_KILL_MS, undefined, { ref: false });
    const last = abandoned ? { bytesIn: 0, bytesOut: 0 } : await count();
    client.destroy();
    return { ...last, failure };
  });
  function kill() {
    killed = true;
    run.kill();
  }
  function abandon() {
    abandoned = true;
    run.kill();
    client.destroy();
  }
  return { count, kill, abandon, ended };
}

/** The socket as the relay port knows it; throws when it has no descriptor to hand over. */
function callerOf(client: Socket): CallerConnection {
  const descriptor = (client as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (descriptor === undefined || descriptor < 0) throw new Error("the caller's connection has no descriptor");
  return { descriptor, remoteAddress: client.remoteAddress, remotePort: client.remotePort };
}
