import { bodyParser } from "@koa/bodyparser";
import type { Context } from "koa";
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
