import type { Page } from "puppeteer-core";
import { FRAMES_TEXTS, type FixtureSites, startFixtureSites } from "../../../test/fixtures/sites";
import { launchTestChromium, type TestChromium } from "../../../test/support/chromium";
import { type ObservedFrames, observeFrames, TabIndices } from "../src/adapters/cdp/observe-frames";

/**
 * The frames page (a form frame, an outer frame holding a deep one, shadow roots) read the way the agent reads it: all
 * frames at once, element indices handed out by the tab.
 */
let chromium: TestChromium;
let sites: FixtureSites;
let page: Page;
beforeAll(async () => {
  [chromium, sites] = await Promise.all([launchTestChromium(), startFixtureSites()]);
  page = await chromium.browser.newPage();
});
afterAll(async () => {
  await chromium?.close();
  await sites?.close();
});

/** Index → label, for the elements shown. */
const shown = (observed: ObservedFrames) =>
  new Map(observed.lines.flatMap((l) => (l.kind === "element" ? [[l.index, l.text] as const] : [])));
const indexOf = (observed: ObservedFrames, text: string) =>
  [...shown(observed)].find(([, line]) => line.includes(text))?.[0];

test("every frame's elements are listed under indices of their own, kept across observations and new for a new document", async () => {
  await page.goto(`${sites.url}/frames/`, { waitUntil: "load" });
  const indices = new TabIndices();
  const first = await observeFrames(page, indices, 20_000);
  const labels = [...shown(first).values()].join("\n");
  for (const text of [FRAMES_TEXTS.mainButton, FRAMES_TEXTS.frameButton, FRAMES_TEXTS.deepButton]) {
    expect(labels).toContain(text);
  }
  // One index per element, 1..n in reading order of the frames: no two frames share one.
  const numbers = first.lines.flatMap((l) => (l.kind === "element" ? [l.index] : []));
  expect(new Set(numbers).size).toBe(numbers.length);
  expect([...numbers].sort((a, b) => a - b)).toEqual(numbers.map((_, i) => i + 1));
  expect(first.elementRefs.get(indexOf(first, FRAMES_TEXTS.deepButton)!)!.frame.url()).toContain("/frames/deep");

  // Read again: the same element, the same index.
  const again = await observeFrames(page, indices, 20_000);
  expect(shown(again)).toEqual(shown(first));

  // The form frame loads its document again: its elements are new ones, with new indices; the others keep theirs.
  const formFrame = first.elementRefs.get(indexOf(first, FRAMES_TEXTS.frameButton)!)!.frame;
  await formFrame.goto(formFrame.url(), { waitUntil: "load" });
  const reloaded = await observeFrames(page, indices, 20_000);
  expect(indexOf(reloaded, FRAMES_TEXTS.frameButton)).toBeGreaterThan(Math.max(...numbers));
  expect(indexOf(reloaded, FRAMES_TEXTS.deepButton)).toBe(indexOf(first, FRAMES_TEXTS.deepButton));
  expect(indexOf(reloaded, FRAMES_TEXTS.mainButton)).toBe(indexOf(first, FRAMES_TEXTS.mainButton));

  // A new page in the tab starts at 1 again.
  await page.reload({ waitUntil: "load" });
  const fresh = await observeFrames(page, indices, 20_000);
  expect(Math.min(...shown(fresh).keys())).toBe(1);
  expect(shown(fresh)).toEqual(shown(first));
});
