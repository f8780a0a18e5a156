import WebSocket from "ws";
import type { LiveMode } from "../../domain/cdp-route";
import { liveCommandOf } from "../../domain/live-input";
import { type CdpConnection, connectCdp } from "./cdp-connection";
import type { DevtoolsAddress } from "./devtools-json";

/** One person watching a browser: a CDP connection of its own that streams the followed tab's screencast. */
export interface LiveSession {
  /** The browser stopped: the viewer is told, then the connection closes. */
  end(): void;
}

interface Tab {
  title: string;
  url: string;
}

/**
 * Streams a browser to one live view client: the frames of the tab it follows (Page.startScreencast, which sends a
 * frame only when the page changes, and the next only once the client has taken the last one), the tab list and
 * URL, and in `control` mode the person's mouse and keyboard. It follows the newest tab; the person can switch.
 * Input from a `view` client is never read.
 */
export function startLiveSession(
  client: WebSocket,
  upstream: DevtoolsAddress & { browserPath: string },
  mode: LiveMode,
  extras: { viewUrl?: string; onClose(): void },
): LiveSession {
  const tabs = new Map<string, Tab>();
  let active: { targetId: string; sessionId: string } | undefined;
  let cdp: CdpConnection | undefined;
  let ended = false;
  let switching = Promise.resolve();

  const send = (message: object, done?: () => void) => {
    if (client.readyState !== WebSocket.OPEN) return;
    client.send(JSON.stringify(message), () => done?.());
  };
  const sendTabs = () =>
    send({ type: "tabs", activeId: active?.targetId ?? null, tabs: [...tabs].map(([id, t]) => ({ id, ...t })) });

  /**
   * Titles and URLs as the browser has them now: Chromium does not always announce a title change
   * (Target.targetInfoChanged), so the list is read again now and then while someone watches.
   */
  const refresh = setInterval(async () => {
    const targets = await cdp?.send("Target.getTargets").catch(() => undefined);
    let changed = false;
    for (const t of targets?.targetInfos ?? []) {
      const tab = tabs.get(t.targetId);
      if (tab && (tab.title !== t.title || tab.url !== t.url)) {
        tabs.set(t.targetId, { title: t.title, url: t.url });
        changed = true;
      }
    }
    if (changed) sendTabs();
  }, 1_000);
  refresh.unref();

  function end(reason: string) {
    clearInterval(refresh);
    if (ended) return;
    ended = true;
    send({ type: "ended", reason }, () => client.close(1000, "ended"));
    // A client that does not take the last message is closed anyway.
    setTimeout(() => client.terminate(), 2_000).unref();
    cdp?.close();
    extras.onClose();
  }

  /** Follows `targetId`: its screencast replaces the one before. Switches run one after another. */
  function follow(targetId: string) {
    switching = switching
      .then(async () => {
        if (!cdp || ended || active?.targetId === targetId || !tabs.has(targetId)) return;
        const before = active;
        active = undefined;
        if (before) await cdp.send("Target.detachFromTarget", { sessionId: before.sessionId }).catch(() => undefined);
        const { sessionId } = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
        active = { targetId, sessionId };
        await cdp.send(
          "Page.startScreencast",
          { format: "jpeg", quality: 70, maxWidth: 1920, maxHeight: 1080 },
          sessionId,
        );
        sendTabs();
      })
      .catch(() => undefined); // the tab closed while switching: the next event picks another
  }

  async function start() {
    cdp = await connectCdp(upstream);
    cdp.onClose(() => end("the browser stopped"));
    cdp.on("Page.screencastFrame", (frame, sessionId) => {
      if (sessionId !== active?.sessionId) return;
      const { deviceWidth: width, deviceHeight: height } = frame.metadata;
      // The next frame comes once this one is acknowledged: acknowledging when the client has it keeps a slow
      // viewer from piling frames up.
      send({ type: "frame", data: frame.data, width, height }, () => {
        void cdp?.send("Page.screencastFrameAck", { sessionId: frame.sessionId }, sessionId).catch(() => undefined);
      });
    });
    cdp.on("Target.targetCreated", ({ targetInfo }) => {
      if (targetInfo.type !== "page") return;
      tabs.set(targetInfo.targetId, { title: targetInfo.title, url: targetInfo.url });
      follow(targetInfo.targetId);
    });
    cdp.on("Target.targetInfoChanged", ({ targetInfo }) => {
      if (!tabs.has(targetInfo.targetId)) return;
      tabs.set(targetInfo.targetId, { title: targetInfo.title, url: targetInfo.url });
      sendTabs();
    });
    cdp.on("Target.targetDestroyed", ({ targetId }) => {
      if (!tabs.delete(targetId)) return;
      if (active?.targetId === targetId) active = undefined;
      const newest = [...tabs.keys()].at(-1);
      if (newest) follow(newest);
      sendTabs();
    });
    send({ type: "hello", mode, ...(extras.viewUrl ? { viewUrl: extras.viewUrl } : {}) });
    await cdp.send("Target.setDiscoverTargets", { discover: true });
  }

  if (mode === "control") {
    client.on("message", (data) => {
      const command = liveCommandOf(data.toString());
      if (!command || !cdp || ended) return;
      if (command.kind === "switch-tab") {
        void cdp.send("Target.activateTarget", { targetId: command.targetId }).catch(() => undefined);
        follow(command.targetId);
        return;
      }
      if (active) void cdp.send(command.method, command.params, active.sessionId).catch(() => undefined);
    });
  }
  client.on("close", () => {
    clearInterval(refresh);
    ended = true;
    cdp?.close();
    extras.onClose();
  });
  client.on("error", () => client.terminate());
  start().catch(() => end("the browser did not answer"));
  return { end: () => end("the browser stopped") };
}
