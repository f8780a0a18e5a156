import type { Readable } from "node:stream";

/** The blob was deleted while it was being read: what was read of it is not the whole. */
export class BlobDeletedError extends Error {
  override name = "BlobDeletedError";
  constructor(readonly ref: string) {
    super(`blob ${ref} was deleted while it was read`);
  }
}

/** A stored blob's bytes as a stream, with what is needed to serve it. */
export interface BlobObject {
  ref: string;
  contentType: string;
  size: number;
  /** The content; read it once. It ends with BlobDeletedError if the blob is deleted before it is all read. */
  stream: Readable;
}

export interface PutBlobOptions {
  contentType: string;
  /**
   * The reference to store under; pass a deterministic one (for instance built from the session id and step) so that a
   * retried upload overwrites instead of storing a second copy. Defaults to a fresh one.
   */
  ref?: string;
  /** Prefix of a generated reference (`screenshot`, `recording`); ignored when `ref` is given. */
  kind?: string;
}

/** Content-addressed storage for screenshots and recordings, by reference. */
export interface BlobStore {
  /** Stores the content and returns its reference. */
  put(data: Uint8Array | Readable, options: PutBlobOptions): Promise<string>;
  /** The blob, or null when no blob has this reference (or it was deleted). */
  get(ref: string): Promise<BlobObject | null>;
  /** The whole content in memory; for small blobs (screenshots). Null when absent. */
  getBytes(ref: string): Promise<{ data: Uint8Array; contentType: string } | null>;
  delete(ref: string): Promise<void>;
  /** The store does not own the NATS connection; this only marks it unusable. */
  close(): Promise<void>;
}
