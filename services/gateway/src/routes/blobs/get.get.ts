import { Readable } from "node:stream";
import contentDisposition from "content-disposition";
import { BlobDeletedError, isBlobRef } from "@bas/blobs";
import { z } from "zod";
import { HttpError } from "../../http/http-error";
import { defineRoute } from "../../http/route";

/**
 * The blob's stream once its first bytes are there: a blob deleted as it is read (BlobDeletedError) is then still a
 * 404, where answering at once would have sent 200 and its headers before finding out.
 */
async function started(stream: Readable): Promise<Readable> {
  const chunks = stream[Symbol.asyncIterator]();
  let first: IteratorResult<Buffer>;
  try {
    first = await chunks.next();
  } catch (err) {
    if (err instanceof BlobDeletedError) throw new HttpError(404, "Blob not found");
    throw err;
  }
  return Readable.from(
    (async function* () {
      if (first.done) return;
      yield first.value;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    })(),
    { objectMode: false },
  );
}

export const route = defineRoute({
  method: "get",
  path: "/blobs/{ref}",
  auth: "public",
  operationId: "getBlob",
  summary: "A screenshot or recording, through a presigned URL (the signature is the credential)",
  tags: ["Blobs"],
  request: {
    params: z.object({
      ref: z
        .string()
        .refine(isBlobRef, { message: "Input should be a blob reference", params: { type: "value_error" } }),
    }),
    query: z.object({
      exp: z.string().optional(),
      sig: z.string().optional(),
      dl: z.string().max(1024).optional().describe("Save as this file name (signed with the URL)."),
    }),
  },
  responses: { 200: { description: "The blob's bytes", contentType: "application/octet-stream" } },
  errors: [403, 404, 410],
  async handler({ params, query }, deps) {
    const check = deps.urls.verify(params.ref, query.exp, query.sig, query.dl);
    if (check === "invalid") throw new HttpError(403, "Invalid or missing signature");
    if (check === "expired") throw new HttpError(410, "This link has expired; read the session again for a fresh one");
    const blob = await deps.blobs.get(params.ref);
    if (!blob) throw new HttpError(404, "Blob not found");
    return {
      body: await started(blob.stream),
      type: blob.contentType,
      headers: {
        "Content-Length": String(blob.size),
        "Cache-Control": "private, max-age=300",
        ...(query.dl === undefined ? {} : { "Content-Disposition": contentDisposition(query.dl) }),
      },
    };
  },
});
