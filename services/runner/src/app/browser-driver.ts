import type { BrowserAction } from "../domain/actions";
import type { PageSnapshot } from "../domain/page-state";
import type { TraceEntry } from "../domain/replay-script";
import type { SecretDomains } from "../domain/secrets";

export type { TraceEntry };

export interface ActOptions {
  /** Values for `<secret>key</secret>` placeholders; typed, never echoed. */
  secrets: Readonly<Record<string, string>>;
  /** Where each secret may be typed (a key not named: anywhere). */
  secretDomains: SecretDomains;
  /** The browser's allowedDomains (its egress proxy enforces them): to say why a navigation was refused. */
  allowedDomains?: readonly string[];
  /** Record selectors for a replay script (code mode). */
  trace: boolean;
  signal?: AbortSignal;
}

export interface ActResult {
  /** What happened, for the model (never contains secret values). */
  result: string;
  /** The model is now looking at another page (navigation, tab switch): later actions of the step are skipped. */
  pageChanged: boolean;
  trace?: TraceEntry;
}

/** A file for a page's file input. */
export interface InputFile {
  name: string;
  contentType: string;
  data: Uint8Array;
}

/** The browser as the agent loop uses it; implemented over CDP with puppeteer-core. */
export interface BrowserDriver {
  observe(options: { maxChars: number; screenshot: boolean }): Promise<PageSnapshot>;
  /** Runs an action. Failures the model can fix are thrown as `ActionError`s with a message for it. */
  act(action: Exclude<BrowserAction, { name: "extract" }>, options: ActOptions): Promise<ActResult>;
  /** A JPEG of the current tab's viewport; undefined when the page cannot be captured. */
  screenshot(): Promise<Uint8Array | undefined>;
  /**
   * Puts a file into the file input with this index of the current page, as if the user picked it (the page sees
   * `change`). Returns what happened, for the model; an element that is not a file input is an ActionError.
   */
  setInputFile(index: number, file: InputFile): Promise<string>;
  /** The whole current page as text, for `extract`. */
  pageContent(maxChars: number): Promise<{ url: string; text: string }>;
  /** False once the connection to the browser is lost. */
  isConnected(): boolean;
  /** Lets go of the browser without stopping it (the session may keep it). */
  disconnect(): Promise<void>;
}
