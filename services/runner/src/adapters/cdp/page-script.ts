import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Loads a function that runs inside the page from a plain `.js` file next to this one. Functions written in
 * TypeScript can get transpiler helpers (`__name`) that do not exist in the page, so in-page code with inner
 * functions lives in `.js` files and is handed to puppeteer as created from its source text.
 */
export function loadPageScript(file: string): { source: string; fn: (...args: any[]) => any } {
  const source = readFileSync(join(__dirname, file), "utf8")
    .replace(/^\/\*\*[\s\S]*?\*\/\s*/, "")
    .trim()
    .replace(/;$/, "");
  return { source, fn: new Function(`return (${source});`)() };
}
