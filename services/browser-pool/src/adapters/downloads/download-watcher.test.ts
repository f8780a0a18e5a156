import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Launched } from "../../app/ports";
import { createDownloadWatcher } from "./download-watcher";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "download-watcher-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A local browser whose DevTools socket is gone, as one being disposed. */
const goneBrowser = () =>
  ({
    running: {
      handle: {
        driver: "local",
        devtoolsUrl: "ws://127.0.0.1:9222/devtools/browser/gone",
        devtoolsSocket: join(dir, "devtools.sock"),
        userDataDir: dir,
      },
    },
  }) as unknown as Launched;

test("a browser whose downloads cannot be watched is logged, unless its watcher was closed as it ended", async () => {
  const warnings: string[] = [];
  const watcher = createDownloadWatcher({ warn: (_fields, msg) => warnings.push(msg) });

  const abandoned = watcher.watch("abandoned", goneBrowser(), () => undefined);
  abandoned?.close();
  await abandoned?.ready;
  expect(warnings).toEqual([]);

  await watcher.watch("served", goneBrowser(), () => undefined)?.ready;
  expect(warnings).toEqual(["downloads of the browser are not kept"]);
});
