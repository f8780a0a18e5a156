import type { BrowserWindows } from "../../app/ports";
import { type BrowserHandle, devtoolsSocketOf } from "../../domain/events";
import { connectCdp } from "./cdp-connection";
import { devtoolsUpstream } from "./devtools-json";

/**
 * The screen and the windows a running browser has now, over a CDP connection of ours that stays open until `close`:
 * a warm browser's are looked up while it waits, so that sizing it when it is handed out takes one round trip.
 */
export async function openWindows(handle: BrowserHandle): Promise<BrowserWindows> {
  const cdp = await connectCdp(devtoolsUpstream(handle.devtoolsUrl, devtoolsSocketOf(handle)));
  try {
    const { targetInfos } = await cdp.send("Target.getTargets");
    const pages = (targetInfos as { targetId: string; type: string }[]).filter((t) => t.type === "page");
    const windowIds: number[] = [];
    for (const target of pages) {
      windowIds.push((await cdp.send("Browser.getWindowForTarget", { targetId: target.targetId })).windowId);
    }
    // A Chromium older than ours (CHROMIUM_PATH) may not know screens over CDP; its windows are fitted all the same.
    const [screen] = await cdp.send("Emulation.getScreenInfos").then(
      (answer) => answer.screenInfos as { id: string }[],
      () => [],
    );
    return {
      /**
       * Headless Chromium opens later windows (a client's new page) at the size of the last one set, so a warm
       * browser resized this way opens pages as one launched with `windowArgs` would: the screen is the window's
       * size, for the page it had and for new ones.
       */
      async resize(width, height) {
        await Promise.all([
          ...(screen ? [cdp.send("Emulation.updateScreen", { screenId: screen.id, width, height })] : []),
          ...windowIds.map((windowId) =>
            cdp.send("Browser.setWindowBounds", { windowId, bounds: { left: 0, top: 0, width, height } }),
          ),
        ]);
      },
      close: () => cdp.close(),
    };
  } catch (err) {
    cdp.close();
    throw err;
  }
}
