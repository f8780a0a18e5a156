import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { newBlobRef } from "@bas/blobs";
import { z } from "zod";
import { HttpError } from "../../http/http-error";
import { defineRoute } from "../../http/route";
import { Uuid } from "../../schemas/common";

/** The media type of a Content-Type header, compared without case or parameters. */
const mediaType = (value: string | undefined) => (value ?? "").split(";")[0].trim().toLowerCase();

/** Passes bytes on while they stay within `size`; one more is an error, and so is fewer at the end. */
function exactly(size: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > size) done(new HttpError(400, `The body is longer than the ${size} bytes this URL was made for`));
      else done(null, chunk);
    },
    flush(done) {
      done(seen === size ? null : new HttpError(400, `The body has ${seen} bytes; this URL was made for ${size}`));
    },
  });
}

export const route = defineRoute({
  method: "put",
  path: "/uploads/{workspaceId}",
  auth: "public",
  rawBody: true,
  operationId: "putWorkspaceUpload",
  summary: "Upload one file through a presigned URL (the signature is the credential)",
  tags: ["Workspaces"],
  request: {
    params: z.object({ workspaceId: Uuid }),
    query: z.object({
      project: z.string().optional(),
      path: z.string().optional(),
      size: z.string().optional(),
      type: z.string().optional(),
      upload: z.string().optional(),
      exp: z.string().optional(),
      sig: z.string().optional(),
    }),
  },
  responses: { 200: { description: "Stored", contentType: "text/plain" } },
  errors: [400, 403, 404, 411, 413],
  async handler({ params, query, headers, stream, signal }, deps) {
    const check = deps.uploads.verify(params.workspaceId, query);
    if (!check.ok) {
      throw check.reason === "expired"
        ? new HttpError(403, "This upload URL has expired; ask for a new one")
        : new HttpError(403, "Invalid or missing signature");
    }
    const { grant } = check;
    if (headers["content-length"] === undefined) {
      throw new HttpError(411, `Send Content-Length: ${grant.size}, the size this URL was made for`);
    }
    if (Number(headers["content-length"]) !== grant.size) {
      throw new HttpError(400, `Content-Length must be ${grant.size}, the size this URL was made for`);
    }
    if (mediaType(headers["content-type"]) !== mediaType(grant.contentType)) {
      throw new HttpError(400, `Content-Type must be ${grant.contentType}, the type this URL was made for`);
    }
    const ref = newBlobRef(grant.contentType, "workspace");
    // Told first, the sessions service sweeps the blob should its commit never come (this process dies first).
    await deps.workspaces.expectUpload({ blobRef: ref });
    const counted = exactly(grant.size);
    // The blob store reads the body through the size check; whichever fails first fails both.
    await Promise.all([
      pipeline(stream, counted, { signal }),
      deps.blobs.put(counted, { contentType: grant.contentType, ref }),
    ]).catch(async (err) => {
      await deps.blobs.delete(ref).catch(() => undefined);
      throw err;
    });
    try {
      await deps.workspaces.commitFile({ ...grant, blobRef: ref });
    } catch (err) {
      // Not recorded (over the quota, the workspace deleted meanwhile): its bytes must not stay behind.
      await deps.blobs.delete(ref).catch(() => undefined);
      throw err;
    }
    return { body: "OK", type: "text/plain" };
  },
});
