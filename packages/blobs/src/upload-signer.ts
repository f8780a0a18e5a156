import { createHmac, timingSafeEqual } from "node:crypto";

/** What a presigned upload URL allows: one PUT of exactly `size` bytes of `contentType`, to `path` of a workspace. */
export interface UploadGrant {
  /** The project the URL was made for: the upload is recorded on its behalf (the URL is its only credential). */
  projectId: string;
  workspaceId: string;
  path: string;
  size: number;
  contentType: string;
  /** A v4 upload's id, recorded with the file so that a run can attach it (`attachedFileIds`). */
  uploadId?: string;
}

export type UploadCheck = { ok: true; grant: UploadGrant } | { ok: false; reason: "invalid" | "expired" };

export interface UploadUrlSigner {
  /** An absolute PUT URL for the grant that works until `now + ttl`. */
  sign(grant: UploadGrant): string;
  /** The grant of an upload URL's query (`project`, `path`, `size`, `type`, `upload`, `exp`, `sig`) for the workspace
   * in its path. */
  verify(workspaceId: string, query: Record<string, unknown>): UploadCheck;
}

export interface UploadUrlSignerOptions {
  /** The HMAC key (BLOB_SIGNING_KEY); a domain prefix keeps these signatures apart from download URLs'. */
  key: string;
  baseUrl: string;
  /** Lifetime of an upload URL; default 5 minutes (the contract's). */
  ttlMs?: number;
  now?: () => number;
}

const DEFAULT_TTL_MS = 5 * 60 * 1000;

/**
 * Presigned upload URLs: `<base>/uploads/<workspaceId>?project=&path=&size=&type=&upload=&exp=&sig=` (`upload` for v4
 * uploads only), the signature over all of them,
 * so the size and content type the caller declared are what the upload must have, and nothing can be changed.
 */
export function createUploadUrlSigner(options: UploadUrlSignerOptions): UploadUrlSigner {
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  const now = options.now ?? Date.now;
  const base = options.baseUrl.replace(/\/+$/, "");
  const mac = (g: UploadGrant, exp: string) =>
    createHmac("sha256", options.key)
      .update(
        JSON.stringify([
          "workspace-upload",
          g.projectId,
          g.workspaceId,
          g.path,
          g.size,
          g.contentType,
          exp,
          ...(g.uploadId === undefined ? [] : [g.uploadId]),
        ]),
      )
      .digest();

  return {
    sign(grant) {
      const exp = String(Math.ceil((now() + ttlMs) / 1000));
      const query = new URLSearchParams({
        project: grant.projectId,
        path: grant.path,
        size: String(grant.size),
        type: grant.contentType,
        ...(grant.uploadId === undefined ? {} : { upload: grant.uploadId }),
        exp,
        sig: mac(grant, exp).toString("base64url"),
      });
      return `${base}/uploads/${encodeURIComponent(grant.workspaceId)}?${query}`;
    },
    verify(workspaceId, query) {
      const { project, path, size, type, upload, exp, sig } = query;
      if (
        (upload !== undefined && typeof upload !== "string") ||
        typeof project !== "string" ||
        typeof path !== "string" ||
        typeof type !== "string" ||
        typeof sig !== "string" ||
        typeof size !== "string" ||
        !/^\d{1,15}$/.test(size) ||
        typeof exp !== "string" ||
        !/^\d{1,12}$/.test(exp)
      ) {
        return { ok: false, reason: "invalid" };
      }
      const grant: UploadGrant = {
        projectId: project,
        workspaceId,
        path,
        size: Number(size),
        contentType: type,
        ...(upload === undefined ? {} : { uploadId: upload }),
      };
      const given = Buffer.from(sig, "base64url");
      const expected = mac(grant, exp);
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        return { ok: false, reason: "invalid" };
      if (Number(exp) * 1000 <= now()) return { ok: false, reason: "expired" };
      return { ok: true, grant };
    },
  };
}
