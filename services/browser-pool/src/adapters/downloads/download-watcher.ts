import { join } from "node:path";
import type { DownloadedFile, DownloadWatcher } from "../../app/ports";
import { connectCdp } from "../cdp/cdp-connection";
import { devtoolsUpstream } from "../cdp/devtools-json";

/** Chromium names each download by its id (`allowAndName`): a UUID, so it can never lead out of the folder. */
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Keeps what local browsers download: a CDP connection of browser-pool's own tells Chromium to save downloads in the
 * browser's profile (`<profile>/Downloads/<guid>`, inside its sandbox or container, which binds that folder from
 * this host) and to announce them, and hands each finished file on. A browser in a pod keeps its files in the pod,
 * out of reach: nothing is watched there.
 */
export function createDownloadWatcher(log: { warn(o: object, msg: string): void }): DownloadWatcher {
  return {
    watch(id, launched, onFile) {
      const { handle } = launched.running;
      if (handle.driver === "kubernetes") return undefined;
      const folder = join(handle.userDataDir, "Downloads");
      const offered = new Map<string, { url: string; fileName: string }>();
      const connecting = connectCdp(devtoolsUpstream(handle.devtoolsUrl, handle.devtoolsSocket)).then(async (cdp) => {
        cdp.on("Browser.downloadWillBegin", ({ guid, url, suggestedFilename }) => {
          offered.set(guid, { url, fileName: suggestedFilename });
        });
        cdp.on("Browser.downloadProgress", ({ guid, state }) => {
          if (state === "inProgress") return;
          const download = offered.get(guid);
          offered.delete(guid);
          if (state !== "completed" || !download || !GUID.test(guid)) return;
          onFile({ guid: guid.toLowerCase(), ...download, path: join(folder, guid) } satisfies DownloadedFile);
        });
        await cdp.send("Browser.setDownloadBehavior", {
          behavior: "allowAndName",
          downloadPath: folder,
          eventsEnabled: true,
        });
        return cdp;
      });
      let closed = false;
      const ready = connecting.then(
        () => undefined,
        // Once closed, the browser is ending: its connection failing is no news.
        (err) => {
          if (!closed) log.warn({ err, browserId: id }, "downloads of the browser are not kept");
        },
      );
      return {
        ready,
        close() {
          closed = true;
          void connecting.then((cdp) => cdp.close()).catch(() => undefined);
        },
      };
    },
  };
}
