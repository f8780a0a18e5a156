import type { BrowserHandle } from "../../domain/events";
import { connectCdp } from "./cdp-connection";
import { devtoolsUpstream } from "./devtools-json";

/**
 * Sizes every window of a running browser. Headless Chromium opens later windows (a client's new page) at the size
 * of the last one set, so a warm browser resized this way opens pages as one launched with `--window-size` would.
 * (The window it already had keeps its viewport but reports an outer height without the headless frame.)
 */
export async function resizeWindows(handle: BrowserHandle, width: number, height: number): Promise<void> {
  const socket = handle.driver === "local" ? handle.devtoolsSocket : undefined;
  const cdp = await connectCdp(devtoolsUpstream(handle.devtoolsUrl, socket));
  try {
    const { targetInfos } = await cdp.send("Target.getTargets");
    for (const target of targetInfos as { targetId: string; type: string }[]) {
      if (target.type !== "page") continue;
      const { windowId } = await cdp.send("Browser.getWindowForTarget", { targetId: target.targetId });
      await cdp.send("Browser.setWindowBounds", { windowId, bounds: { width, height } });
    }
  } finally {
    cdp.close();
  }
}
