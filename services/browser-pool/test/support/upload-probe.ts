import type { Browser, ElementHandle } from "puppeteer-core";

/**
 * A tab of the tenant's on `siteUrl` with a file input, and what a host path handed to the page through it
 * (DOM.setFileInputFiles, which no URL policy stops) lets the page read: the file's text, "no file", or
 * "unreadable: <error>".
 */
export async function uploadProbe(browser: Browser, siteUrl: string) {
  const tab = await browser.newPage();
  await tab.goto(siteUrl);
  await tab.evaluate(() => {
    document.body.innerHTML = '<input type="file" id="f">';
  });
  const input = (await tab.$("#f")) as ElementHandle<HTMLInputElement> | null;
  return {
    async read(path: string): Promise<string> {
      await input!.uploadFile(path).catch(() => undefined);
      return tab.evaluate(async () => {
        const file = (document.getElementById("f") as HTMLInputElement).files?.[0];
        if (!file) return "no file";
        return file.text().catch((err: Error) => `unreadable: ${err.name}`);
      });
    },
    close: () => tab.close(),
  };
}
