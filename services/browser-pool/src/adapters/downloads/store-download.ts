import { constants } from "node:fs";
import { open, rm } from "node:fs/promises";
import type { BlobStore } from "@bas/blobs";
import { lookup } from "mime-types";
import type { DownloadedFile, StoreDownload } from "../../app/ports";

/**
 * Moves a finished download from the browser's profile into the blob store, as `download-<browserId>-<guid>`. The
 * file was written by the tenant's browser: it is opened without following links, must be a plain file, and may be
 * at most `maxBytes`; it is removed from the profile either way.
 */
export function createDownloadStore(blobs: BlobStore, maxBytes: number): StoreDownload {
  return async (browserId: string, file: DownloadedFile) => {
    try {
      const handle = await open(file.path, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        const stat = await handle.stat();
        if (!stat.isFile()) throw new Error("the download is not a plain file");
        if (stat.size > maxBytes) {
          throw new Error(`the download has ${stat.size} bytes, more than the ${maxBytes} a browser may keep per file`);
        }
        const ref = await blobs.put(handle.createReadStream({ autoClose: false }), {
          contentType: lookup(file.fileName) || "application/octet-stream",
          ref: `download-${browserId}-${file.guid}`,
        });
        return { ref, size: stat.size };
      } finally {
        await handle.close();
      }
    } finally {
      await rm(file.path, { force: true });
    }
  };
}
