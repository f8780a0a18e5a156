export { BLOB_REF_PATTERN, InvalidBlobRefError, isBlobRef, newBlobRef } from "./blob-ref";
export { type BlobObject, BlobDeletedError, type BlobStore, type PutBlobOptions } from "./blob-store";
export { blobBucketName, createNatsBlobStore, type NatsBlobStoreOptions } from "./nats-blob-store";
export { type Removal, removeEach } from "./remove-each";
export {
  type BlobUrlSigner,
  type BlobUrlSignerOptions,
  createBlobUrlSigner,
  DEFAULT_URL_TTL_MS,
  type SignatureCheck,
} from "./url-signer";
export {
  createUploadUrlSigner,
  type UploadCheck,
  type UploadGrant,
  type UploadUrlSigner,
  type UploadUrlSignerOptions,
} from "./upload-signer";
