import { isBlobRef } from "@bas/blobs";
import { z } from "zod";
import { HttpError } from "../../http/http-error";
import { defineRoute } from "../../http/route";

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
    query: z.object({ exp: z.string().optional(), sig: z.string().optional() }),
  },
  responses: { 200: { description: "The blob's bytes", contentType: "application/octet-stream" } },
  errors: [403, 404, 410],
  async handler({ params, query }, deps) {
    const check = deps.urls.verify(params.ref, query.exp, query.sig);
    if (check === "invalid") throw new HttpError(403, "Invalid or missing signature");
    if (check === "expired") throw new HttpError(410, "This link has expired; read the session again for a fresh one");
    const blob = await deps.blobs.get(params.ref);
    if (!blob) throw new HttpError(404, "Blob not found");
    return {
      body: blob.stream,
      type: blob.contentType,
      headers: { "Content-Length": String(blob.size), "Cache-Control": "private, max-age=300" },
    };
  },
});
