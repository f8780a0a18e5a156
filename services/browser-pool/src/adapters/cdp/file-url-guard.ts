import { connectCdp } from "./cdp-connection";
import { devtoolsUpstream } from "./devtools-json";

export interface FileUrlGuard {
  close(): void;
}

/**
 * Refuses every `file:` URL in a browser, for the browsers that read no policies (the headless shell): a CDP
 * connection of ours to the browser target that intercepts that scheme alone (`Fetch` at the browser level covers
 * every page and browser context, however it was opened) and fails each request with `ERR_ACCESS_DENIED`. A tenant's
 * own interception cannot let one through: Chromium asks every client that intercepts, and ours is not the tenant's
 * to close. `http(s)` requests never pause here. Should our connection break, `onLost` is called: the browser is
 * unguarded from then on.
 */
export async function guardFileUrls(
  devtoolsUrl: string,
  devtoolsSocket: string | undefined,
  onLost: () => void | Promise<void>,
): Promise<FileUrlGuard> {
  const cdp = await connectCdp(devtoolsUpstream(devtoolsUrl, devtoolsSocket));
  let closing = false;
  cdp.onClose(() => {
    if (!closing) void onLost();
  });
  cdp.on("Fetch.requestPaused", ({ requestId }) => {
    cdp.send("Fetch.failRequest", { requestId, errorReason: "AccessDenied" }).catch(() => undefined);
  });
  const guard: FileUrlGuard = {
    close() {
      closing = true;
      cdp.close();
    },
  };
  try {
    await cdp.send("Fetch.enable", { patterns: [{ urlPattern: "file:*" }] });
  } catch (err) {
    guard.close();
    throw err;
  }
  return guard;
}
