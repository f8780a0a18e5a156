/** The browser connection is gone (the browser stopped or crashed): the attempt cannot go on. */
export class BrowserGoneError extends Error {
  override name = "BrowserGoneError";
}

/** A file or mail tool could not do what the model asked; its message is for the model (as an ActionError's). */
export class ToolError extends Error {
  override name = "ActionError";
}

/**
 * Errors whose message is written for the model: ActionError from the CDP driver, and from the file and mail tools
 * (which name their errors so too).
 */
export function isModelFacing(err: unknown): err is Error {
  return err instanceof Error && err.name === "ActionError";
}

/** The session's browser could not be reached over CDP (browser-pool restarting, the browser being replaced). */
export class BrowserConnectError extends Error {
  override name = "BrowserConnectError";
  /** Worth waiting out: `retry` tries again. */
  readonly retryable = true;
}
