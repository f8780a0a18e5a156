import { createHmac, timingSafeEqual } from "node:crypto";
import { isBlobRef } from "./blob-ref";

/** What checking a signed blob URL found. */
export type SignatureCheck = "valid" | "invalid" | "expired";

export interface BlobUrlSigner {
  /**
   * An absolute URL of the blob that works until `now + ttl`; with `downloadAs`, one whose answer tells a browser to
   * save the blob under that file name (`dl`, signed too).
   */
  sign(ref: string, downloadAs?: string): string;
  /** Checks the `exp`, `sig` and (when there is one) `dl` query values of a blob URL for `ref`. */
  verify(ref: string, exp: string | undefined, sig: string | undefined, downloadAs?: string): SignatureCheck;
}

export interface BlobUrlSignerOptions {
  /** The HMAC key (BLOB_SIGNING_KEY); every replica that serves blobs must share it. */
  key: string;
  /** The public base URL of the gateway, e.g. `https://api.example.com`. */
  baseUrl: string;
  /** Lifetime of a signed URL; default 5 minutes (the contract's screenshot URL lifetime). */
  ttlMs?: number;
  now?: () => number;
}

export const DEFAULT_URL_TTL_MS = 5 * 60 * 1000;

/**
 * Presigned URLs for blobs: `<base>/blobs/<ref>?exp=<unix seconds>&sig=<HMAC-SHA256(ref "." exp), base64url>`, and
 * `&dl=<file name>` with the name after a newline in the signed text (neither a ref nor an expiry holds one). The
 * expiry and the name are inside the signed text, so neither can be changed without the key.
 */
export function createBlobUrlSigner(options: BlobUrlSignerOptions): BlobUrlSigner {
  const ttlMs = options.ttlMs ?? DEFAULT_URL_TTL_MS;
  const now = options.now ?? Date.now;
  const base = options.baseUrl.replace(/\/+$/, "");
  const mac = (ref: string, exp: string, downloadAs: string | undefined) =>
    createHmac("sha256", options.key)
      .update(downloadAs === undefined ? `${ref}.${exp}` : `${ref}.${exp}\n${downloadAs}`)
      .digest();

  return {
    sign(ref, downloadAs) {
      if (!isBlobRef(ref)) throw new Error(`invalid blob reference ${JSON.stringify(ref)}`);
      const exp = String(Math.ceil((now() + ttlMs) / 1000));
      const sig = mac(ref, exp, downloadAs).toString("base64url");
      const dl = downloadAs === undefined ? "" : `&dl=${encodeURIComponent(downloadAs)}`;
      return `${base}/blobs/${ref}?exp=${exp}&sig=${sig}${dl}`;
    },
    verify(ref, exp, sig, downloadAs) {
      if (!exp || !sig || !/^\d{1,12}$/.test(exp) || !isBlobRef(ref)) return "invalid";
      const given = Buffer.from(sig, "base64url");
      const expected = mac(ref, exp, downloadAs);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "invalid";
      return Number(exp) * 1000 <= now() ? "expired" : "valid";
    },
  };
}
