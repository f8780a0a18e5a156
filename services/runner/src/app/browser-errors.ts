/** The browser connection is gone (the browser stopped or crashed): the attempt cannot go on. */
export class BrowserGoneError extends Error {
  override name = "BrowserGoneError";
}

/** Errors whose message is written for the model (ActionError from the CDP driver). */
export function isModelFacing(err: unknown): err is Error {
  return err instanceof Error && err.name === "ActionError";
}
