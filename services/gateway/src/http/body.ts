import { bodyParser } from "@koa/bodyparser";
import type { Context } from "koa";
import { HttpError } from "./http-error";
import { RequestValidationError } from "./validation-error";

/**
 * Reads a JSON body up to `maxBytes` whatever the content type says (clients omit or mislabel it). Too large is a
 * 413; text that is not JSON is a 422 like any other invalid input, never a 500.
 */
export function createBodyReader(maxBytes: number): (ctx: Context) => Promise<unknown> {
  const parse = bodyParser({
    enableTypes: ["json"],
    detectJSON: () => true,
    jsonStrict: false,
    jsonLimit: maxBytes,
    onError(err) {
      // raw-body's own failures (too large, aborted, bad encoding) carry a `type`; the rest is a JSON syntax error.
      if ((err as { type?: string }).type) throw err;
      throw new RequestValidationError([{ loc: ["body"], msg: "JSON decode error", type: "json_invalid" }]);
    },
  });
  return async (ctx) => {
    await parse(ctx, async () => undefined);
    const raw = (ctx.request as { rawBody?: string }).rawBody;
    return raw === undefined || raw.trim() === "" ? undefined : ctx.request.body;
  };
}

/**
 * Reads and drops the body of a request to a route that takes none (a GET with a body). Answered without reading it,
 * the connection would be closed with unread data in it, which resets it (TCP RST) and can cut the answer off before
 * the caller has it all. More than `maxBytes` is a 413, as for any body.
 */
export function createBodyDiscarder(maxBytes: number): (ctx: Context) => Promise<void> {
  return async (ctx) => {
    let seen = 0;
    for await (const chunk of ctx.req) {
      seen += (chunk as Buffer).length;
      if (seen > maxBytes) throw new HttpError(413, "Request body too large");
    }
  };
}
