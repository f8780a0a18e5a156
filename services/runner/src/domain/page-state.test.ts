import { type PageSnapshot, renderSnapshot } from "./page-state";

const snapshot = (lines: PageSnapshot["lines"], extra: Partial<PageSnapshot> = {}): PageSnapshot => ({
  url: "http://shop.test/",
  title: "Shop",
  tabs: [
    { id: 1, url: "http://shop.test/", title: "Shop" },
    { id: 2, url: "http://other.test/", title: "" },
  ],
  activeTabId: 1,
  scroll: { x: 0, y: 800, viewportWidth: 1280, viewportHeight: 800, pageWidth: 1280, pageHeight: 4000 },
  lines,
  omittedAbove: 0,
  omittedBelow: 0,
  elements: new Map(),
  ...extra,
});

test("the page for the model: URL, tabs, scroll position, and content lines with element indexes", () => {
  const text = renderSnapshot(
    snapshot([
      { kind: "text", text: "Welcome" },
      { kind: "element", index: 7, text: "<button>Buy</button>" },
    ]),
    10_000,
  );
  expect(text).toContain("Current URL: http://shop.test/");
  expect(text).toContain("  [1] (current) Shop - http://shop.test/\n  [2] (no title) - http://other.test/");
  expect(text).toContain("Scroll: 1.0 pages above, 3.0 pages below the viewport");
  expect(text).toContain("Welcome\n[7]<button>Buy</button>");
});

test("content beyond the budget is cut with a note saying how to see it", () => {
  const lines = Array.from({ length: 500 }, (_, i) => ({ kind: "text" as const, text: `line ${i} ${"x".repeat(40)}` }));
  const text = renderSnapshot(snapshot(lines, { omittedAbove: 20, omittedBelow: 30 }), 5_000);
  expect(text.length).toBeLessThanOrEqual(5_100);
  expect(text).toContain("... 20 lines above not shown (scroll up to see them) ...");
  expect(text).toMatch(/\.\.\. \d+ lines below not shown \(scroll down to see them, or use extract\) \.\.\.$/);
});
