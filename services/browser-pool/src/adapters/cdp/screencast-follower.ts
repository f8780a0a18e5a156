import type { CdpConnection } from "./cdp-connection";

export interface Tab {
  id: string;
  title: string;
  url: string;
}

export interface ScreencastFrame {
  /** Base64 JPEG. */
  data: string;
  width: number;
  height: number;
  /** Asks for the next frame: Chromium sends one only once the last is acknowledged. */
  ack(): void;
}

export interface ScreencastOptions {
  quality: number;
  maxWidth: number;
  maxHeight: number;
  onFrame(frame: ScreencastFrame): void;
  /** The tab list, the followed tab or a title or URL changed. */
  onTabs?(): void;
}

/**
 * Follows a browser's newest tab and streams its screencast (Page.startScreencast sends a frame only when the page
 * changes) over a CDP connection of our own: what the live view and recordings both watch. A closed tab hands over to
 * the newest one left; `follow` switches on request.
 */
export function followScreencast(cdp: CdpConnection, options: ScreencastOptions) {
  const tabs = new Map<string, Omit<Tab, "id">>();
  let active: { targetId: string; sessionId: string } | undefined;
  let stopped = false;
  let switching = Promise.resolve();

  /**
   * Titles and URLs as the browser has them now: Chromium does not always announce a title change
   * (Target.targetInfoChanged), so the list is read again now and then for whoever shows it.
   */
  const refresh =
    options.onTabs &&
    setInterval(async () => {
      const targets = await cdp.send("Target.getTargets").catch(() => undefined);
      let changed = false;
      for (const t of targets?.targetInfos ?? []) {
        const tab = tabs.get(t.targetId);
        if (tab && (tab.title !== t.title || tab.url !== t.url)) {
          tabs.set(t.targetId, { title: t.title, url: t.url });
          changed = true;
        }
      }
      if (changed) options.onTabs?.();
    }, 1_000);
  refresh?.unref();

  /** Follows `targetId`: its screencast replaces the one before. Switches run one after another. */
  function follow(targetId: string) {
    switching = switching
      .then(async () => {
        if (stopped || active?.targetId === targetId || !tabs.has(targetId)) return;
        const before = active;
        active = undefined;
        if (before) await cdp.send("Target.detachFromTarget", { sessionId: before.sessionId }).catch(() => undefined);
        const { sessionId } = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
        active = { targetId, sessionId };
        const { quality, maxWidth, maxHeight } = options;
        await cdp.send("Page.startScreencast", { format: "jpeg", quality, maxWidth, maxHeight }, sessionId);
        options.onTabs?.();
      })
      .catch(() => undefined); // the tab closed while switching: the next event picks another
  }

  cdp.on("Page.screencastFrame", (frame, sessionId) => {
    if (stopped || sessionId !== active?.sessionId) return;
    options.onFrame({
      data: frame.data,
      width: frame.metadata.deviceWidth,
      height: frame.metadata.deviceHeight,
      ack: () => void cdp.send("Page.screencastFrameAck", { sessionId: frame.sessionId }, sessionId).catch(() => {}),
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
    options.onTabs?.();
  });
  cdp.on("Target.targetDestroyed", ({ targetId }) => {
    if (!tabs.delete(targetId)) return;
    if (active?.targetId === targetId) active = undefined;
    const newest = [...tabs.keys()].at(-1);
    if (newest) follow(newest);
    options.onTabs?.();
  });

  return {
    /** Announces the tabs there are (each is followed in turn, the newest last). */
    start: () => cdp.send("Target.setDiscoverTargets", { discover: true }) as Promise<void>,
    follow,
    tabs: (): Tab[] => [...tabs].map(([id, t]) => ({ id, ...t })),
    /** The followed tab and the CDP session attached to it, if any. */
    active: () => active,
    stop() {
      stopped = true;
      if (refresh) clearInterval(refresh);
    },
  };
}

export type ScreencastFollower = ReturnType<typeof followScreencast>;
