import type { Page } from "puppeteer-core";

/** The downloads a tab started, for the agent's step to report. */
export interface PageDownloads {
  /** Names of the files the tab started downloading since the last call. */
  take(): string[];
  dispose(): void;
}

/**
 * Notices downloads a tab starts (Page.downloadWillBegin, on a CDP session of our own: browser-pool keeps the files,
 * the agent only says what happened). The session is set up in the background, so adding a tab never waits for it.
 */
export function watchPageDownloads(page: Page): PageDownloads {
  const started: string[] = [];
  const session = page
    .createCDPSession()
    .then(async (s) => {
      s.on("Page.downloadWillBegin", (event) => started.push(event.suggestedFilename));
      await s.send("Page.enable");
      return s;
    })
    .catch(() => undefined);
  return {
    take: () => started.splice(0),
    dispose: () => void session.then((s) => s?.detach()).catch(() => undefined),
  };
}
