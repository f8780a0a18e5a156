import { randomUUID } from "node:crypto";

/**
 * A blob reference is a flat, URL-safe name: it travels in events and gRPC messages and becomes one path segment of a
 * signed URL (`/blobs/<ref>`), so it has no slashes and nothing that needs escaping.
 */
export const BLOB_REF_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

export function isBlobRef(value: string): boolean {
  return BLOB_REF_PATTERN.test(value) && !value.includes("..");
}

/** The blob reference was not one `isBlobRef` accepts. */
export class InvalidBlobRefError extends Error {
  override name = "InvalidBlobRefError";
  constructor(readonly ref: string) {
    super(`invalid blob reference ${JSON.stringify(ref.slice(0, 80))}`);
  }
}

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/webp": "webp",
  "video/webm": "webm",
  "video/mp4": "mp4",
  "application/json": "json",
  "text/plain": "txt",
};

/** A fresh reference; the extension (from the content type) helps whoever downloads the file. */
export function newBlobRef(contentType: string, prefix = "blob"): string {
  const ext = EXTENSIONS[contentType.split(";")[0].trim().toLowerCase()];
  return `${prefix}-${randomUUID()}${ext ? `.${ext}` : ""}`;
}
