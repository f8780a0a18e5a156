import WebSocket from "ws";
import type { LiveMode } from "../../domain/cdp-route";
import { liveCommandOf } from "../../domain/live-input";
import { type CdpConnection, connectCdp } from "./cdp-connection";
import type { DevtoolsAddress } from "./devtools-json";
import { followScreencast, type ScreencastFollower } from "./screencast-follower";

/** One person watching a browser: a CDP connection of its own that streams the followed tab's screencast. */
export interface LiveSession {
  /** The browser stopped: the viewer is told, then the connection closes. */
  end(): void;
}

/**
 * Streams a browser to one live view client: the frames of the tab it follows (the next only once the client has
 * taken the last one), the tab list and URL, and in `control` mode the person's mouse and keyboard. It follows the
 * newest tab; the person can switch. Input from a `view` client is never read.
 */
export function startLiveSession(
  client: WebSocket,
  upstream: DevtoolsAddress & { browserPath: string },
  mode: LiveMode,
  extras: { viewUrl?: string; onClose(): void },
): LiveSession {
  let cdp: CdpConnection | undefined;
  let screencast: ScreencastFollower | undefined;
  let ended = false;

  const send = (message: object, done?: () => void) => {
    if (client.readyState !== WebSocket.OPEN) return;
    client.send(JSON.stringify(message), () => done?.());
  };
  const sendTabs = () =>
    send({ type: "tabs", activeId: screencast?.active()?.targetId ?? null, tabs: screencast?.tabs() ?? [] });

  function release() {
    screencast?.stop();
    cdp?.close();
    extras.onClose();
  }

  function end(reason: string) {
    if (ended) return;
    ended = true;
    send({ type: "ended", reason }, () => client.close(1000, "ended"));
    // A client that does not take the last message is closed anyway.
    setTimeout(() => client.terminate(), 2_000).unref();
    release();
  }

  async function start() {
    cdp = await connectCdp(upstream);
    cdp.onClose(() => end("the browser stopped"));
    screencast = followScreencast(cdp, {
      quality: 70,
      maxWidth: 1920,
      maxHeight: 1080,
      // Acknowledging when the client has the frame keeps a slow viewer from piling frames up.
      onFrame: ({ data, width, height, ack }) => send({ type: "frame", data, width, height }, ack),
      onTabs: sendTabs,
    });
    send({ type: "hello", mode, ...(extras.viewUrl ? { viewUrl: extras.viewUrl } : {}) });
    await screencast.start();
  }

  if (mode === "control") {
    client.on("message", (data) => {
      const command = liveCommandOf(data.toString());
      if (!command || !cdp || !screencast || ended) return;
      if (command.kind === "switch-tab") {
        void cdp.send("Target.activateTarget", { targetId: command.targetId }).catch(() => undefined);
        screencast.follow(command.targetId);
        return;
      }
      const active = screencast.active();
      if (active) void cdp.send(command.method, command.params, active.sessionId).catch(() => undefined);
    });
  }
  client.on("close", () => {
    ended = true;
    release();
  });
  client.on("error", () => client.terminate());
  start().catch(() => end("the browser did not answer"));
  return { end: () => end("the browser stopped") };
}
