import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { JetStreamClient } from "@nats-io/jetstream";
import { type ObjectStore, Objm, StorageType } from "@nats-io/obj";
import { headers as natsHeaders } from "@nats-io/transport-node";
import { InvalidBlobRefError, isBlobRef, newBlobRef } from "./blob-ref";
import { type BlobObject, BlobDeletedError, type BlobStore, type PutBlobOptions } from "./blob-store";

const CONTENT_TYPE = "Content-Type";

export interface NatsBlobStoreOptions {
  js: JetStreamClient;
  /** The deployment namespace; the bucket is `<namespace>_blobs`. */
  namespace: string;
  /** How long blobs are kept; default forever. */
  maxAgeMs?: number;
  /** JetStream replicas of the bucket when it is created (NATS_REPLICAS). */
  replicas?: number;
  /** How often a blob being read is checked for having been deleted meanwhile (default 5 s). */
  deletionCheckMs?: number;
}

/** The object-store bucket of a namespace (its stream is `OBJ_<bucket>`). */
export function blobBucketName(namespace: string): string {
  return `${namespace}_blobs`;
}

/**
 * Blob store on a JetStream object store bucket: every service of a deployment that opens it sees the same blobs, and
 * the bytes live where the events do (replicated with the NATS cluster), so no separate object storage is needed.
 */
export async function createNatsBlobStore(options: NatsBlobStoreOptions): Promise<BlobStore> {
  const objm = new Objm(options.js);
  const bucket: ObjectStore = await objm.create(blobBucketName(options.namespace), {
    storage: StorageType.File,
    replicas: options.replicas ?? 1,
    ...(options.maxAgeMs ? { ttl: options.maxAgeMs * 1_000_000 } : {}),
  });
  let closed = false;

  function checked(ref: string): string {
    if (closed) throw new Error("blob store is closed");
    if (!isBlobRef(ref)) throw new InvalidBlobRefError(ref);
    return ref;
  }

  async function put(data: Uint8Array | Readable, opts: PutBlobOptions): Promise<string> {
    const ref = checked(opts.ref ?? newBlobRef(opts.contentType, opts.kind));
    const headers = natsHeaders();
    headers.set(CONTENT_TYPE, opts.contentType);
    const meta = { name: ref, headers };
    if (data instanceof Uint8Array) await bucket.putBlob(meta, data);
    else await bucket.put(meta, Readable.toWeb(data) as unknown as ReadableStream<Uint8Array>);
    return ref;
  }

  async function get(ref: string): Promise<BlobObject | null> {
    const result = await bucket.get(checked(ref));
    if (!result) return null;
    // A broken object (missing chunks) surfaces on the stream, so the reader sees a failed download.
    const stream = Readable.fromWeb(result.data as unknown as WebReadableStream<Uint8Array>);
    // An error before anyone reads (the blob deleted meanwhile) must not be an unhandled 'error' event that ends the
    // process: a reader still gets it, as async iteration and pipeline see the error of a destroyed stream.
    stream.on("error", () => undefined);
    result.error.then((err) => err && stream.destroy(err)).catch(() => undefined);
    watchForDeletion(ref, stream);
    return {
      ref,
      contentType: result.info.headers?.get(CONTENT_TYPE) || "application/octet-stream",
      size: result.info.size,
      stream,
    };
  }

  /**
   * A blob deleted while it is read would never deliver its remaining chunks, and its reader would wait forever: while
   * the stream is open, every `deletionCheckMs` its object is looked up, and a deleted one ends the stream with
   * BlobDeletedError.
   */
  function watchForDeletion(ref: string, stream: Readable) {
    const timer = setInterval(() => {
      bucket
        .info(ref)
        .then((info) => {
          if (!info || info.deleted) stream.destroy(new BlobDeletedError(ref));
        })
        .catch(() => undefined);
    }, options.deletionCheckMs ?? 5_000);
    timer.unref();
    stream.once("close", () => clearInterval(timer));
  }

  async function getBytes(ref: string): Promise<{ data: Uint8Array; contentType: string } | null> {
    const blob = await get(ref);
    if (!blob) return null;
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of blob.stream) chunks.push(chunk as Buffer);
    } catch (err) {
      if (err instanceof BlobDeletedError) return null;
      throw err;
    }
    return { data: new Uint8Array(Buffer.concat(chunks)), contentType: blob.contentType };
  }

  async function remove(ref: string): Promise<void> {
    await bucket.delete(checked(ref)).catch((err: unknown) => {
      if (!/not found/i.test(String((err as Error)?.message))) throw err;
    });
  }

  return {
    put,
    get,
    getBytes,
    delete: remove,
    close: async () => {
      closed = true;
    },
  };
}
